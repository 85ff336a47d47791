"""Marker-IR fuzzer for both lowerings: each input is a module of marker IR,
run through `opt-19 -load-pass-plugin=build/lib/TidalPasses.so` with
`tidal-lower-host` and with `tidal-lower-nvptx`, one process per run, with a
time limit. Inputs: random IR from `llvm-stress-19` (its function listed as a
kernel), and mutations of the marker calls of test/lit/plugin/*.ll (extreme
constants, swapped markers, deleted and duplicated lines). Outcomes:
  ok / rejected   lowered, or refused with a diagnostic (opt's exit status 1)
  crash           opt died of a signal, printed a stack dump, or stopped
                  with "LLVM ERROR" (report_fatal_error; inside Python that
                  ends the interpreter)
  hang            no answer in time

    /usr/bin/python3 utils/fuzz/fuzz_markers.py [--count N] [--seconds S] [--seed K]
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

EXTREME_INTEGERS = ["0", "1", "-1", "3", "7", "64", "65536", "65537", "2147483647",
                    "-2147483648", "4294967295", "4294967296", "4611686018427387904",
                    "9223372036854775807", "-9223372036854775808"]
MARKER_CALL = re.compile(r"@tidal\.[\w.]+")
INTEGER_ARGUMENT = re.compile(r"\b(i\d+) (-?\d+)\b")


def lit_inputs():
    inputs = []
    for path in sorted(glob.glob(os.path.join(ROOT, "test", "lit", "plugin", "*.ll"))):
        with open(path) as f:
            text = f.read()
        if "@tidal." in text:
            inputs.append((os.path.basename(path), text))
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


def stress_input(rng):
    seed = rng.randrange(1 << 30)
    size = rng.choice([10, 50, 200])
    done = subprocess.run([STRESS, f"--seed={seed}", f"--size={size}"], capture_output=True,
                          text=True, timeout=TIME_LIMIT)
    text = done.stdout
    # Make its function a kernel, so that the lowerings work on it.
    names = re.findall(r"^define [^@]*@([\w.]+)\(", text, re.M)
    if names:
        text += f"\n!tidal.kernels = !{{!900}}\n!900 = !{{ptr @{names[0]}}}\n"
    return f"llvm-stress --seed={seed} --size={size}", text


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


def main():
    options = common.parse_arguments(__doc__.splitlines()[0], default_count=100)
    plugin = os.path.join(os.path.abspath(options.build), "lib", "TidalPasses.so")
    if not os.path.exists(plugin):
        print(f"fuzz-markers: {plugin} is missing: build first (make build)")
        return 1
    rng = random.Random(options.seed)
    inputs = lit_inputs()
    markers = sorted({m for _, text in inputs for m in MARKER_CALL.findall(text)})
    tally = common.Tally("fuzz-markers", options)
    work = os.path.join(options.out, "work")
    os.makedirs(work, exist_ok=True)
    for index in range(options.count):
        if tally.out_of_time():
            break
        if rng.random() < 0.25:
            origin, text = stress_input(rng)
        else:
            name, original = rng.choice(inputs)
            origin, text = f"mutant of test/lit/plugin/{name}", mutate_markers(original, rng,
                                                                                markers)
        path = os.path.join(work, f"input_{options.seed}_{index}.ll")
        with open(path, "w") as f:
            f.write(text)
        pipeline = PIPELINES[index % 2]
        outcome, message = run_opt(plugin, pipeline, path)
        header = (f"; fuzz_markers.py seed {options.seed} input {index} ({origin}): {outcome}\n"
                  f"; {message[:300]}\n"
                  f";   opt-19 -load-pass-plugin=build/lib/TidalPasses.so -passes={pipeline} "
                  f"-disable-output THIS\n")
        tally.record(outcome, index, message, header + text, ".ll")
        os.unlink(path)
    return tally.finish()


if __name__ == "__main__":
    common.main_guard(main)
