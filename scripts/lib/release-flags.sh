# shellcheck shell=bash
# How camd's release binaries are built; sourced by scripts/install and scripts/quickstart, and
# what the benchmarks measure (`swift build -c release "${CAMD_RELEASE_FLAGS[@]}"`):
#   --static-swift-stdlib   the Swift runtime linked in: nothing of the toolchain is needed where
#                           camd is installed;
#   -function-sections      one section per function, Swift's and C's, in every package, so that
#                           the link puts the functions camd runs together at the start of its
#                           code (Package.swift, Sources/camd/hot-functions.txt; issue 16: memory);
#   -enforce-exclusivity=unchecked
#                           no run-time check of Swift's exclusive access in release builds, as
#                           Xcode's Release configuration builds by default; the compiler still
#                           checks what it can see, and debug builds (the tests) keep the run-time
#                           check. SwiftPM's release builds check at run time, about 225 calls a
#                           snapshot poll, most in NIO: 13% of a poll's instructions (issue 16,
#                           scripts/bench/callgrind.py);
#   -cross-module-optimization
#                           NIO's and Hummingbird's generic code specialized into camd's modules
#                           rather than looked up at run time: 3% fewer instructions a poll again.
CAMD_RELEASE_FLAGS=(--static-swift-stdlib -Xswiftc -Xfrontend -Xswiftc -function-sections
                    -Xcc -ffunction-sections -Xcxx -ffunction-sections
                    -Xswiftc -enforce-exclusivity=unchecked -Xswiftc -cross-module-optimization)
