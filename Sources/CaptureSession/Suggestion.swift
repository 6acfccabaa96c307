
/// "Did you mean": the nearest known word to a typo, in camd.toml, the API and camctl alike.
public enum Suggestion {
    /// The candidate nearest to `word` by edit distance (a swap of neighbours counts as one edit),
    /// when it is near enough to be a likely typo, or the only candidate `word` abbreviates ("warn").
    public static func closest(to word: String, in candidates: [String]) -> String? {
        let word = word.lowercased()
        let extensions = candidates.filter { word.count >= 2 && $0.hasPrefix(word) }
        if extensions.count == 1 { return extensions[0] }
        // One edit in a short word already changes most of it.
        let limit = word.count <= 3 ? 1 : max(2, word.count / 3)
        let scored = candidates.map { (candidate: $0, distance: editDistance(word, $0)) }
        guard let best = scored.min(by: { $0.distance < $1.distance }), best.distance <= limit, best.distance < max(word.count, 1)
        else { return nil }
        return best.candidate
}

    /// Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps.
    public static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }
}
