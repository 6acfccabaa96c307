# shellcheck shell=bash
# How camd's release binaries are built; sourced by scripts/install and scripts/quickstart, and
# what the benchmarks measure (`swift build -c release "${CAMD_RELEASE_FLAGS[@]}"`):
#   --static-swift-stdlib   the Swift runtime linked in: nothing of the toolchain is needed where
#                           camd is installed;
#   -function-sections      one section per function, Swift's and C's, in every package, so that
#                           the link puts the functions camd runs together at the start of its
#                           code (Package.swift, Sources/camd/hot-functions.txt; issue 16: memory).
CAMD_RELEASE_FLAGS=(--static-swift-stdlib -Xswiftc -Xfrontend -Xswiftc -function-sections
                    -Xcc -ffunction-sections -Xcxx -ffunction-sections)
