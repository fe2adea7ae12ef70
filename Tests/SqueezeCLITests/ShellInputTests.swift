import Foundation
import TestSupport
import Testing

/// The test runner survives a child that stops reading its standard input.
@Suite struct ShellInputTests {
  /// A child that exits without reading leaves the runner's writes to a closed pipe; before
  /// `Shell.feed` blocked `SIGPIPE`, that signal ended the whole runner (signal 13).
  @Test func aChildThatExitsWithoutReadingDoesNotEndTheRunner() throws {
    let input = [UInt8](repeating: 0x61, count: 4 << 20)
    for _ in 0..<3 {
      let result = try Shell.run("/bin/sh", ["-c", "exit 3"], input: input)
      #expect(result.status == 3)
    }
    // Children still inherit the default disposition: `yes` dies of SIGPIPE (141).
    let child = try Shell.run(
      "/bin/bash", ["-c", "yes | head -c 1 >/dev/null; echo \"${PIPESTATUS[0]}\""])
    #expect(child.stdoutText == "141\n")
  }
}
