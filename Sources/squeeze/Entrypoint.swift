import SqueezeCLI

/// The `squeeze` executable: everything lives in SqueezeCLI and the modules below it (see
/// `SqueezeCommand.start()`).
@main
struct Squeeze {
  static func main() {
    SqueezeCommand.start()
  }
}
