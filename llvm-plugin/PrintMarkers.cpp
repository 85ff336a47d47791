// tidal-print-markers: prints the marker table (tidal/Markers.def) on
// stdout, one line per marker, as docs/markers.md lists it; with the
// contract's version first. test/lit/plugin/print-markers.ll compares the
// two. Changes nothing.
//   opt-19 -load-pass-plugin=build/lib/TidalPasses.so -passes=tidal-print-markers -disable-output /dev/null

#include "Markers.h"
#include "PassClasses.h"
#include "tidal/Contract.h"

#include "llvm/Support/raw_ostream.h"

#define DEBUG_TYPE "tidal-print-markers"

using namespace llvm;

namespace tidal {

bool printMarkers(Module &) {
  outs() << "; marker contract version " << MarkerContractVersion << "\n";
  printMarkerTable(outs());
  return true;
}

} // namespace tidal
