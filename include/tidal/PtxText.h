// Reading the `.func` declarations of PTX text, for the two places that
// look into PTX without a PTX parser: the linking of `.ptx` files into
// kernels (python/src/ForeignLinking.cpp: names, linkage, parameter counts,
// for its checks and messages) and the mock CUDA driver's linker
// (test/mock_driver: which functions a module defines and which it needs).
// Header-only, so that the mock driver, which links nothing of tidal, can
// use it.
#ifndef TIDAL_PTXTEXT_H
#define TIDAL_PTXTEXT_H

#include <cctype>
#include <cstddef>
#include <string>
#include <vector>

namespace tidal::ptx {

// One `.func` of PTX text.
struct FunctionHeader {
  std::string Name;
  std::string Linkage;      // "extern", "visible", "weak", or "" (the module's own)
  bool Defined = false;     // a body follows (and it is not .extern)
  bool Returns = false;     // a return parameter: `.func (.param ...) name(...)`
  unsigned Parameters = 0;  // parameters in its list
  size_t Start = 0;         // the start of its line
  size_t HeaderEnd = 0;     // just after its parameter list
  size_t End = 0;           // its ';' or '{' (the text's end without either)
  // Its header as written, from its line's start to its parameters' end,
  // with runs of white space as one space (for messages).
  std::string header(const std::string &PTX) const {
    std::string Flat;
    for (size_t I = Start; I < HeaderEnd && I < PTX.size(); ++I) {
      char C = PTX[I];
      bool Space = std::isspace(static_cast<unsigned char>(C));
      if (Space && (Flat.empty() || Flat.back() == ' ' || Flat.back() == '('))
        continue;
      if (C == ')' && !Flat.empty() && Flat.back() == ' ')
        Flat.pop_back();
      Flat += Space ? ' ' : C;
    }
    return Flat;
  }
};

// A character of a PTX identifier.
inline bool isIdentifierChar(char C) {
  return std::isalnum(static_cast<unsigned char>(C)) || C == '_' || C == '$' || C == '.';
}

// Every `.func` of PTX, in order; those in `//` comments and longer words
// (`.function`) skipped.
inline std::vector<FunctionHeader> readFunctionHeaders(const std::string &PTX) {
  std::vector<FunctionHeader> Out;
  auto skipSpace = [&](size_t I) {
    while (I < PTX.size() && std::isspace(static_cast<unsigned char>(PTX[I])))
      ++I;
    return I;
  };
  // Past the parenthesised list at I; counts its top-level entries.
  auto skipParens = [&](size_t I, unsigned *Entries) {
    int Depth = 0;
    bool Any = false;
    unsigned Commas = 0;
    for (; I < PTX.size(); ++I) {
      char C = PTX[I];
      if (C == '(') {
        ++Depth;
      } else if (C == ')') {
        if (--Depth == 0)
          break;
      } else if (Depth == 1 && C == ',') {
        ++Commas;
      } else if (Depth >= 1 && !std::isspace(static_cast<unsigned char>(C))) {
        Any = true;
      }
    }
    if (Entries)
      *Entries = Any ? Commas + 1 : 0;
    return I < PTX.size() ? I + 1 : I;
  };
  for (size_t At = PTX.find(".func"); At != std::string::npos; At = PTX.find(".func", At + 5)) {
    size_t LineStart = PTX.rfind('\n', At);
    LineStart = LineStart == std::string::npos ? 0 : LineStart + 1;
    std::string Before = PTX.substr(LineStart, At - LineStart);
    char After = At + 5 < PTX.size() ? PTX[At + 5] : ' ';
    if (Before.find("//") != std::string::npos ||
        !(std::isspace(static_cast<unsigned char>(After)) || After == '('))
      continue; // a comment, or a longer word
    FunctionHeader F;
    F.Start = LineStart;
    for (const char *Linkage : {"extern", "visible", "weak"})
      if (Before.find(std::string(".") + Linkage) != std::string::npos)
        F.Linkage = Linkage;
    size_t I = skipSpace(At + 5);
    if (I < PTX.size() && PTX[I] == '(') {
      F.Returns = true;
      I = skipSpace(skipParens(I, nullptr));
    }
    size_t NameStart = I;
    while (I < PTX.size() && isIdentifierChar(PTX[I]))
      ++I;
    F.Name = PTX.substr(NameStart, I - NameStart);
    if (F.Name.empty())
      continue;
    I = skipSpace(I);
    if (I < PTX.size() && PTX[I] == '(')
      I = skipParens(I, &F.Parameters);
    F.HeaderEnd = I;
    size_t Body = PTX.find_first_of("{;", I);
    F.Defined = F.Linkage != "extern" && Body != std::string::npos && PTX[Body] == '{';
    F.End = Body == std::string::npos ? PTX.size() : Body;
    Out.push_back(std::move(F));
  }
  return Out;
}

} // namespace tidal::ptx

#endif
