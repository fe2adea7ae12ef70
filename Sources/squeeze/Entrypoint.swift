import Glibc
import SqueezeCore

/// The `squeeze` executable: everything lives in SqueezeCore (see `SqueezeCommand`).
@main
struct Squeeze {
  static func main() async {
    exit(await SqueezeCommand.main(arguments: SqueezeCommand.processArguments))
  }
}
