"""Marker-IR fuzzer for both lowerings: each input is a module of marker IR,
run with `tidal-lower-host` or with `tidal-lower-nvptx` by build/bin/tidal-fuzz-lower
(utils/fuzz/FuzzLower.cpp: the plugin's passes linked in, a forked child per
input, --jobs at once, as `opt-19 -load-pass-plugin=build/lib/TidalPasses.so
-passes=... -disable-output` would run them; --opt runs opt-19 itself, one
process per input, to compare). Inputs: mutations of the marker calls of
test/lit/plugin/*.ll (extreme constants, swapped markers, deleted and
duplicated lines, markers of another element type: float16 among them) and, one in ten, random IR from `llvm-stress-19` (its
function listed as a kernel; made in batches, several processes at once).
Outcomes:
  ok / rejected   lowered, or refused with a diagnostic (opt's exit status 1)
  crash           died of a signal, or stopped with "LLVM ERROR"
  llvm-parser-fatal  "LLVM ERROR" inside LLVM's IR parser, before any tidal
                  pass (LLVM's own behaviour; not failing the run)
                  (report_fatal_error; inside Python that ends the interpreter)
  hang            no answer in time

    /usr/bin/python3 utils/fuzz/fuzz_markers.py [--count N] [--seconds S] [--seed K] [--jobs J] [--opt]
"""
import glob
import os
import random
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OPT = "opt-19"
STRESS = "llvm-stress-19"
TIME_LIMIT = 20
PIPELINES = ["tidal-lower-host", "tidal-lower-nvptx"]
BATCH = 64            # inputs made at once (their llvm-stress processes run together)
STRESS_SHARE = 0.1    # of the inputs, from llvm-stress (a process start each)

EXTREME_INTEGERS = ["0", "1", "-1", "3", "7", "64", "65536", "65537", "2147483647",
                    "-2147483648", "4294967295", "4294967296", "4611686018427387904",
                    "9223372036854775807", "-9223372036854775808"]
MARKER_CALL = re.compile(r"@tidal\.[\w.]+")
INTEGER_ARGUMENT = re.compile(r"\b(i\d+) (-?\d+)\b")


SPLIT_FILE_PART = re.compile(r"^;--- (\S+)$", re.M)


def lit_inputs():
    """(name, text) of each module of test/lit/plugin/*.ll that calls a
    marker: a file that split-file cuts (`;--- part.ll` lines) gives one per
    part (as a whole, its modules' definitions clash and it never parses)."""
    inputs = []
    for path in sorted(glob.glob(os.path.join(ROOT, "test", "lit", "plugin", "*.ll"))):
        with open(path) as f:
            text = f.read()
        name = os.path.basename(path)
        parts = SPLIT_FILE_PART.split(text)
        modules = ([(name, text)] if len(parts) == 1 else
                   [(f"{name}:{part}", body) for part, body in zip(parts[1::2], parts[2::2])])
        inputs += [(module, body) for module, body in modules if "@tidal." in body]
    return inputs


def mutate_markers(text, rng, markers):
    lines = text.split("\n")
    interesting = [i for i, line in enumerate(lines)
                   if ("@tidal." in line or "!tidal" in line or "!{" in line)
                   and not line.lstrip().startswith(";")]
    for _ in range(rng.choice([1, 1, 2, 3])):
        if not interesting:
            break
        index = rng.choice(interesting)
        line = lines[index]
        choice = rng.random()
        if choice < 0.5 and INTEGER_ARGUMENT.search(line):
            matches = list(INTEGER_ARGUMENT.finditer(line))
            match = rng.choice(matches)
            line = (line[:match.start(2)] + rng.choice(EXTREME_INTEGERS) + line[match.end(2):])
        elif choice < 0.65 and MARKER_CALL.search(line) and "declare" not in line:
            line = MARKER_CALL.sub(lambda _: rng.choice(markers), line, count=1)
        elif choice < 0.75:
            line = ""  # deleted
        elif choice < 0.85:
            lines.insert(index, line)  # duplicated
        elif choice < 0.95:
            # A constant argument made non-constant: the function's first argument.
            line = re.sub(r"\b(i64|i32) (-?\d+)\b", r"\1 %0", line, count=1)
        else:
            line = line.replace("i64", "i32", 1)
        lines[index] = line
    return "\n".join(lines)


BARRIER_CALL = re.compile(r"^(\s*)call void @tidal\.(syncthreads|syncthreads\.\w+|syncwarp|grid\.sync)\b")


def exit_before_barrier(text, rng):
    """Threads that return before a barrier: a barrier's block split at it,
    some threads (by thread index, or one block) going to a `ret void` (a
    GPU's exited threads no longer take part in the block's barriers)."""
    lines = text.split("\n")
    barriers = [i for i, line in enumerate(lines) if BARRIER_CALL.match(line)]
    if not barriers:
        return text
    index = rng.choice(barriers)
    indent = BARRIER_CALL.match(lines[index]).group(1)
    marker = rng.choice(["tid.x", "tid.y", "ctaid.x", "laneid"])
    bound = rng.choice(["0", "1", "7", "31", "4294967295"])
    label = f"fz.{index}"
    lines[index:index] = [f"{indent}%{label}.t = call i32 @tidal.{marker}()",
                          f"{indent}%{label}.c = icmp ugt i32 %{label}.t, {bound}",
                          f"{indent}br i1 %{label}.c, label %{label}.exit, label %{label}.go",
                          f"{label}.exit:", f"{indent}ret void", f"{label}.go:"]
    if f"@tidal.{marker}()" not in text:
        lines.append(f"declare i32 @tidal.{marker}()")
    return "\n".join(lines)


MARKER_SUFFIX = re.compile(r"(@tidal\.[\w.]+?)\.(f16|f32|f64|i8|i16|i32|i64|u32|u64)\b")
SUFFIXES = ["f16", "f32", "f64", "i8", "i16", "i32", "i64", "u32", "u64"]
FLOAT_CALL = re.compile(r"^(\s*)(%[\w.]+) = call (float|double) (@tidal\.[\w.]+)\.(f32|f64)"
                        r"\(((?:(?:float|double) [^,()]+)(?:, (?:float|double) [^,()]+)*)\)\s*$")


def retype_marker(text, rng):
    """A marker of another element type: either its name's type suffix
    changed everywhere (call and declaration; the types no longer match the
    name), or a float marker's call made a float16 one (its operands
    truncated to half, its result extended back: cuda.fp16's functions are
    float32 markers, so a .f16 marker is one the frontend never writes)."""
    lines = text.split("\n")
    calls = [i for i, line in enumerate(lines) if FLOAT_CALL.match(line)]
    if calls and rng.random() < 0.5:
        index = rng.choice(calls)
        indent, result, kind, name, _, arguments = FLOAT_CALL.match(lines[index]).groups()
        replacement, halves = [], []
        for number, argument in enumerate(arguments.split(", ")):
            argument_kind, value = argument.split(" ", 1)
            half = f"%fz.h{index}.{number}"
            replacement.append(f"{indent}{half} = fptrunc {argument_kind} {value} to half")
            halves.append(f"half {half}")
        replacement += [f"{indent}{result}.fz = call half {name}.f16({', '.join(halves)})",
                        f"{indent}{result} = fpext half {result}.fz to {kind}"]
        lines[index:index + 1] = replacement
        declaration = f"declare half {name}.f16({', '.join(['half'] * len(halves))})"
        if declaration not in lines:
            lines.append(declaration)
        return "\n".join(lines)
    names = sorted({match.group(0) for match in MARKER_SUFFIX.finditer(text)})
    if not names:
        return text
    old = rng.choice(names)
    stem = MARKER_SUFFIX.match(old).group(1)
    new = f"{stem}.{rng.choice(SUFFIXES)}"
    return re.sub(re.escape(old) + r"\b", new, text)


def stress_spec(rng):
    return rng.randrange(1 << 30), rng.choice([10, 50, 200])


def stress_texts(specs):
    """The llvm-stress modules of specs [(seed, size)], made at once; each
    one's function is made a kernel, so that the lowerings work on it."""
    processes = [subprocess.Popen([STRESS, f"--seed={seed}", f"--size={size}"],
                                  stdout=subprocess.PIPE, text=True) for seed, size in specs]
    texts = []
    for process in processes:
        text, _ = process.communicate(timeout=TIME_LIMIT)
        names = re.findall(r"^define [^@]*@([\w.]+)\(", text, re.M)
        if names:
            text += f"\n!tidal.kernels = !{{!900}}\n!900 = !{{ptr @{names[0]}}}\n"
        texts.append(text)
    return texts


def generate(options, rng, inputs, markers):
    """The inputs (index, origin, text, pipeline), in batches; the same for a
    seed whatever the jobs."""
    for first in range(0, options.count, BATCH):
        batch = []
        for index in range(first, min(first + BATCH, options.count)):
            if rng.random() < STRESS_SHARE:
                batch.append((index, stress_spec(rng), None))
            else:
                name, original = rng.choice(inputs)
                if rng.random() < 0.1:
                    original = exit_before_barrier(original, rng)
                if rng.random() < 0.1:
                    original = retype_marker(original, rng)
                batch.append((index, f"mutant of test/lit/plugin/{name}",
                              mutate_markers(original, rng, markers)))
        specs = [spec for _, spec, text in batch if text is None]
        stress = iter(stress_texts(specs))
        for number, origin, text in batch:
            if text is None:
                origin, text = f"llvm-stress --seed={origin[0]} --size={origin[1]}", next(stress)
            pipeline = PIPELINES[number % 2]
            if pipeline == "tidal-lower-host" and rng.random() < 0.5:
                text, fitted = with_fitted_flag(text, rng)
                origin += fitted
            yield number, origin, text, pipeline


def with_fitted_flag(text, rng):
    """The text with the module flag tidal.host.fitted (the lowering then
    builds the fitted and coarsened block functions: their folded checks
    and guards, the split of a coarsened x loop), and sometimes a block
    shape to specialise to; as it was if it has module flags already."""
    if re.search(r"^!llvm\.module\.flags", text, re.M):
        return text, ""
    flags = ['!901 = !{i32 1, !"tidal.host.fitted", i32 1}']
    if rng.random() < 0.3:
        shape = [rng.choice([1, 2, 8, 16, 32]) for _ in range(3)]
        flags.append('!902 = !{i32 1, !"tidal.host.fitted.shape", !{i32 %d, i32 %d, i32 %d}}'
                     % tuple(shape))
    names = ", ".join(flag.split(" =")[0] for flag in flags)
    return (text + f"\n!llvm.module.flags = !{{{names}}}\n" + "\n".join(flags) + "\n",
            " (with tidal.host.fitted" + (", a shape" if len(flags) > 1 else "") + ")")


def run_opt(plugin, pipeline, path):
    command = [OPT, f"-load-pass-plugin={plugin}", f"-passes={pipeline}", "-disable-output", path]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=TIME_LIMIT)
    except subprocess.TimeoutExpired:
        return "hang", f"{' '.join(command)}: no answer in {TIME_LIMIT} s"
    error = done.stderr
    if done.returncode < 0 or "Stack dump:" in error or "PLEASE submit a bug report" in error \
            or "LLVM ERROR" in error:
        first = next((line for line in error.splitlines() if line.strip()), "")
        return "crash", f"{' '.join(command)}: status {done.returncode}: {first}"
    return ("ok" if done.returncode == 0 else "rejected"), error[:300]


def write_input(work, seed, index, text):
    path = os.path.join(work, f"input_{seed}_{index}.ll")
    with open(path, "w") as f:
        f.write(text)
    return path


def record(tally, options, index, origin, pipeline, outcome, message, text):
    header = (f"; fuzz_markers.py seed {options.seed} input {index} ({origin}): {outcome}\n"
              f"; {message[:300]}\n"
              f"; replay: opt-19 -load-pass-plugin=build/lib/TidalPasses.so -passes={pipeline} "
              f"-disable-output THIS\n"
              f";     or: printf '1\\t{pipeline}\\tTHIS\\n' | build/bin/tidal-fuzz-lower\n")
    tally.record(outcome, index, message, header + text, ".ll")


def run_with_opt(options, tally, plugin, work, inputs):
    """One opt-19 process per input, one at a time (the reference)."""
    for index, origin, text, pipeline in inputs:
        if tally.out_of_time():
            break
        path = write_input(work, options.seed, index, text)
        outcome, message = run_opt(plugin, pipeline, path)
        record(tally, options, index, origin, pipeline, outcome, message, text)
        os.unlink(path)


def run_with_driver(options, tally, driver, work, inputs):
    """Every input through one tidal-fuzz-lower, --jobs children at once."""
    process = subprocess.Popen([driver, "--jobs", str(options.jobs), "--timeout", str(TIME_LIMIT)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                               bufsize=1)
    pending = {}

    def collect_one():
        line = process.stdout.readline()
        if not line:
            raise RuntimeError(f"{driver} ended with status {process.wait()} "
                               f"with {len(pending)} inputs unanswered")
        number, outcome, message = line.rstrip("\n").split("\t", 2)
        index, origin, text, pipeline, path = pending.pop(int(number))
        record(tally, options, index, origin, pipeline, outcome, message, text)
        os.unlink(path)

    for index, origin, text, pipeline in inputs:
        if tally.out_of_time():
            break
        path = write_input(work, options.seed, index, text)
        pending[index] = (index, origin, text, pipeline, path)
        process.stdin.write(f"{index}\t{pipeline}\t{path}\n")
        process.stdin.flush()
        while len(pending) >= 2 * options.jobs:
            collect_one()
    process.stdin.close()
    while pending:
        collect_one()
    process.wait()


def main():
    options = common.parse_arguments(__doc__.splitlines()[0], default_count=100, extra=lambda p:
                                     p.add_argument("--opt", action="store_true",
                                                    help="run opt-19 per input instead"))
    build = os.path.abspath(options.build)
    plugin = os.path.join(build, "lib", "TidalPasses.so")
    driver = os.path.join(build, "bin", "tidal-fuzz-lower")
    needed = plugin if options.opt else driver
    if not os.path.exists(needed):
        print(f"fuzz-markers: {needed} is missing: build first (make build)")
        return 1
    rng = random.Random(options.seed)
    inputs = lit_inputs()
    markers = sorted({m for _, text in inputs for m in MARKER_CALL.findall(text)})
    tally = common.Tally("fuzz-markers", options)
    work = os.path.join(options.out, "work")
    os.makedirs(work, exist_ok=True)
    generated = generate(options, rng, inputs, markers)
    if options.opt:
        run_with_opt(options, tally, plugin, work, generated)
    else:
        run_with_driver(options, tally, driver, work, generated)
    return tally.finish()


if __name__ == "__main__":
    common.main_guard(main)
