#include "CompileError.h"

namespace tidal::frontend {

std::string CompileError::format(const std::string &Message,
                                 const SourceLocation &Where) {
  std::string Out;
  if (!Where.File.empty())
    Out = Where.File + ":" + std::to_string(Where.Line) + ":" +
          std::to_string(Where.Column) + ": ";
  Out += Message;
  if (Where.SourceLine.empty() || Where.Column <= 0)
    return Out;
  std::string Line = Where.SourceLine;
  while (!Line.empty() && (Line.back() == '\n' || Line.back() == '\r'))
    Line.pop_back();
  // Keep tabs in the caret line so that it lines up with the source.
  std::string Caret;
  for (int I = 0; I + 1 < Where.Column && I < static_cast<int>(Line.size()); ++I)
    Caret += Line[I] == '\t' ? '\t' : ' ';
  int Width = Where.EndColumn > Where.Column ? Where.EndColumn - Where.Column : 1;
  Caret += std::string(static_cast<size_t>(Width), '^');
  return Out + "\n    " + Line + "\n    " + Caret;
}

} // namespace tidal::frontend
