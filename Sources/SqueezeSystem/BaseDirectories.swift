import Glibc

/// The folders a run works relative to (each folder argument, the folder of each file
/// argument, the `-o` folder), opened once and kept open until the run ends, so every later
/// open, create and rename is an `*at` call on a descriptor, immune to `chdir` and to paths
/// longer than `PATH_MAX`. The same path is opened only once, so `squeeze *.log` costs one
/// descriptor, not one per file.
package final class BaseDirectories: Sendable {
  private struct State {
    var paths: [RawPath] = []
    var descriptors: [Int32] = []
    var indexByPath: [RawPath: Int] = [:]
  }
  private let state = Lock(State())

  /// No folder open yet.
  package init() {}

  deinit {
    let descriptors = state.withLock { $0.descriptors }
    for descriptor in descriptors { close(descriptor) }
  }

  /// Opens `path` as a folder (following symbolic links: the user named it), or returns the
  /// index it already has.
  ///
  /// - Returns: the index to pass to ``descriptor(_:)``.
  /// - Throws: ``SystemError`` from `open(2)`, `ENOTDIR` when it is not a folder.
  package func open(_ path: RawPath) throws(SystemError) -> Int {
    if let index = state.withLock({ $0.indexByPath[path] }) { return index }
    let descriptor = try FileDescriptor.open(
      path, flags: .folder, symlinks: .always)
    let raw = descriptor.release()
    return state.withLock { state in
      if let index = state.indexByPath[path] {
        close(raw)
        return index
      }
      state.paths.append(path)
      state.descriptors.append(raw)
      state.indexByPath[path] = state.paths.count - 1
      return state.paths.count - 1
    }
  }

  /// The open descriptor of folder `index`.
  package func descriptor(_ index: Int) -> Int32 {
    state.withLock { $0.descriptors[index] }
  }

  /// The path folder `index` was opened by.
  package func path(_ index: Int) -> RawPath {
    state.withLock { $0.paths[index] }
  }
}
