import SqueezeSystem

/// A path for messages, built only when a message needs it.
///
/// A folder of 20,000 small files names almost none of its outputs in a message, and each
/// output path costs several allocations to build (argument, folder and name joined), so
/// per-file code carries this instead: a given path, or the recipe for an output's path.
struct MessagePath: Sendable {
  private enum Source: Sendable {
    case given(RawPath)
    /// The output called `name` of file `file` of the run's list.
    case output(name: RawPath, file: Int, context: JobContext)
  }

  private let source: Source

  /// A path already at hand.
  init(_ path: RawPath) {
    source = .given(path)
  }

  /// The output called `name` of file `index` of `context`'s list, as
  /// ``OutputPlan/displayPath(named:of:in:)`` shows it.
  init(outputNamed name: RawPath, ofFile index: Int, context: JobContext) {
    source = .output(name: name, file: index, context: context)
  }

  /// The path (built now for an output).
  var path: RawPath {
    switch source {
    case .given(let path):
      return path
    case .output(let name, let index, let context):
      let list = context.list
      return context.settings.plan.displayPath(named: name, of: list.files[index], in: list)
    }
  }
}
