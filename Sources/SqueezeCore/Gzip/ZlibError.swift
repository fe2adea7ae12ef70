import CZlib

/// A zlib call that did not succeed: zlib's return code and, when zlib gave one, its
/// message (`z_stream.msg`), for example `invalid distance too far back`.
///
/// Codes and meanings are zlib's (zlib manual, "Constants"): `Z_STREAM_ERROR` (-2, bad
/// parameters), `Z_DATA_ERROR` (-3, corrupt deflate data), `Z_MEM_ERROR` (-4),
/// `Z_BUF_ERROR` (-5, no progress possible), `Z_VERSION_ERROR` (-6).
struct ZlibError: Error, Equatable, Sendable, CustomStringConvertible {
  /// zlib's return code (`Z_DATA_ERROR` and friends).
  let code: Int32
  /// zlib's own message for the failure, when it set one.
  let message: String?

  init(code: Int32, message: String?) {
    self.code = code
    self.message = message
  }

  /// Reads the code and the stream's message.
  init(code: Int32, stream: UnsafeMutablePointer<z_stream>) {
    self.init(code: code, message: stream.pointee.msg.map { String(cString: $0) })
  }

  /// zlib's message when it gave one, otherwise `zError`'s text for the code, then the
  /// code's name, for example `invalid block type (Z_DATA_ERROR)`.
  var description: String {
    let text = message ?? String(cString: zError(code))
    return "\(text) (\(ZlibError.name(of: code)))"
  }

  /// The `Z_*` name of a zlib return code.
  static func name(of code: Int32) -> String {
    switch code {
    case Z_OK: "Z_OK"
    case Z_STREAM_END: "Z_STREAM_END"
    case Z_NEED_DICT: "Z_NEED_DICT"
    case Z_ERRNO: "Z_ERRNO"
    case Z_STREAM_ERROR: "Z_STREAM_ERROR"
    case Z_DATA_ERROR: "Z_DATA_ERROR"
    case Z_MEM_ERROR: "Z_MEM_ERROR"
    case Z_BUF_ERROR: "Z_BUF_ERROR"
    case Z_VERSION_ERROR: "Z_VERSION_ERROR"
    default: "zlib code \(code)"
    }
  }
}
