import ArgumentParser

@main
struct Camctl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "camctl",
        abstract: "Control cameras: list them, take snapshots, read and set controls.",
        discussion: """
            Exit codes: 0 success; 3 no such device; 4 permission denied; 5 device busy;
            6 unsupported (not a camera, format not offered); 7 device I/O error (disconnected,
            stream error, timeout); 8 cannot write the output file; 64 bad usage.
            Use -d testsrc for the built-in synthetic test source (not a camera).
            snapshot and controls use camd when it runs (fast: the frame comes from the running
            stream) and open the camera themselves when it does not; --no-daemon forces the latter.
            """,
        subcommands: [Devices.self, SnapshotCommand.self, RecordCommand.self, Controls.self, Status.self, Start.self, Stop.self, Configure.self,
                      ContactSheetCommand.self, TimelapseCommand.self, EventsCommand.self])
}
