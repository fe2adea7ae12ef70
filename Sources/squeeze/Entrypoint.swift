import Dispatch
import Glibc
import SqueezeCore
import SqueezeSystem

/// The `squeeze` executable: everything lives in SqueezeCore (see `SqueezeCommand`).
///
/// `main` is synchronous so that standard descriptors closed by the caller are reserved
/// before the concurrency runtime opens anything; the command then runs as a main-actor
/// task on the main dispatch queue, as an `async` main would.
@main
struct Squeeze {
  static func main() {
    StandardDescriptors.reserve()
    Task { @MainActor in
      exit(await SqueezeCommand.main(arguments: SqueezeCommand.processArguments))
    }
    dispatchMain()
  }
}
