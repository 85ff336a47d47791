// The one error type of the frontend: what went wrong, where in the user's
// Python file, and the source line with a caret under the offending code.
// The binding turns it into tidal.errors.<Kind> (a CompileError subclass).
#ifndef TIDAL_FRONTEND_COMPILEERROR_H
#define TIDAL_FRONTEND_COMPILEERROR_H

#include <stdexcept>
#include <string>

namespace tidal::frontend {

struct SourceLocation {
  std::string File;
  int Line = 0;      // 1-based, in the file
  int Column = 0;    // 1-based, in the file
  int EndColumn = 0; // 1-based, exclusive; 0 when unknown
  std::string SourceLine;
};

class CompileError : public std::runtime_error {
public:
  // Kind names the Python class in tidal.errors: "TypingError",
  // "UnsupportedError", "CompileError".
  CompileError(std::string Kind, std::string Message, SourceLocation Where)
      : std::runtime_error(format(Message, Where)), Kind(std::move(Kind)),
        Message(std::move(Message)), Where(std::move(Where)) {}

  const std::string Kind;
  const std::string Message;
  const SourceLocation Where;

  // "file.py:12:8: message\n    source line\n    ^^^^"
  static std::string format(const std::string &Message, const SourceLocation &Where);
};

} // namespace tidal::frontend

#endif
