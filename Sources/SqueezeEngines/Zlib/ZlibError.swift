import CZlib

/// zlib's return codes in squeeze's terms (zlib manual, "Constants"): `Z_STREAM_ERROR` (-2,
/// bad parameters), `Z_DATA_ERROR` (-3, corrupt deflate data), `Z_MEM_ERROR` (-4),
/// `Z_BUF_ERROR` (-5, no progress possible), `Z_VERSION_ERROR` (-6).
enum ZlibError {
  /// An ``EngineError`` for zlib's `code`, with the stream's message (`z_stream.msg`) when
  /// zlib set one, otherwise `zError`'s text, then the code's name:
  /// `invalid distance too far back (zlib Z_DATA_ERROR)`.
  static func make(code: Int32, stream: UnsafeMutablePointer<z_stream>?) -> EngineError {
    let message = stream?.pointee.msg.map { String(cString: $0) }
    return make(code: code, message: message)
  }

  /// An ``EngineError`` for zlib's `code` with `message` (or `zError`'s text when nil).
  static func make(code: Int32, message: String?) -> EngineError {
    let text = message ?? String(cString: zError(code))
    return EngineError(library: .zlib, code: code, detail: "\(text) (zlib \(name(of: code)))")
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
    default: "code \(code)"
    }
  }
}
