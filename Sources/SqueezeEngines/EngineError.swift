/// A compression library call that did not succeed: which library, its return code, and
/// what it means (the library's own message where it gives one), for example
/// `invalid distance too far back (zlib Z_DATA_ERROR)`.
public struct EngineError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The libraries behind the engines.
  public enum Library: String, Sendable {
    case zlib
    case libdeflate
    case isal = "ISA-L"
  }

  /// The library that failed.
  public let library: Library
  /// Its return code (`Z_DATA_ERROR`, `ISAL_INVALID_LOOKBACK`, a `libdeflate_result`), or 0
  /// when the failure is squeeze's check of its output.
  public let code: Int32
  /// The library's message, or the meaning of the code, with the code's name:
  /// `invalid block type (zlib Z_DATA_ERROR)`.
  public let detail: String

  /// An error of `library` with its return `code` and what it means (`detail`).
  public init(library: Library, code: Int32, detail: String) {
    self.library = library
    self.code = code
    self.detail = detail
  }

  /// The ``detail``: what is printed after "failed: " or "corrupt deflate data: ".
  public var description: String { detail }
}
