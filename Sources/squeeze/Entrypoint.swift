import SqueezeCore

/// The `squeeze` executable: everything lives in SqueezeCore and the modules below it (see
/// `SqueezeCommand.start()`).
@main
struct Squeeze {
  static func main() {
    SqueezeCommand.start()
  }
}
