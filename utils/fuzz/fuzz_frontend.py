"""Frontend fuzzer: mutates the AST of realistic kernels (corpus.py) and
compiles and launches each mutant on the cpu target in a worker process
(workers.py: forked from this one, which has imported tidal but never
compiled; --jobs of them at once, each running mutants one after another
until one ends badly, then replaced), with a time limit. Outcomes:
  ok / rejected      ran, or refused with a located error (file.py:line:col),
                     or a runtime check (IndexError, AssertionError, fault)
  interrupted        a kernel that did not finish in time and stopped at
                     Ctrl-C (a mutant's endless loop: not a bug)
  unlocated          an error without a source location
  crash              the process died of a signal
  hang               no answer in time, and none to SIGINT either

    /usr/bin/python3 utils/fuzz/fuzz_frontend.py [--count N] [--seconds S] [--seed K] [--jobs J]
"""
import ast
import copy
import os
import random
import re
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import corpus  # noqa: E402
import workers  # noqa: E402

# A mutant runs in about 0.2 s (compile and launch); one not done in
# LAUNCH_SECONDS (--launch-seconds) is interrupted: mostly endless loops, which
# spin the cpu target's threads meanwhile, so this bounds their cost.
LAUNCH_SECONDS = 2    # then SIGINT
ANSWER_SECONDS = 30   # after SIGINT (a compile still running answers when done), then a hang

# --- mutations: each changes one node of the tree, or returns False -------

BINARY_OPERATORS = [ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow,
                    ast.LShift, ast.RShift, ast.BitOr, ast.BitXor, ast.BitAnd, ast.MatMult]
COMPARISONS = [ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Is, ast.In]
LITERALS = [0, 1, -1, 2, 31, 32, 33, 255, 2**31 - 1, 2**31, 2**32, 2**62, 2**63 - 1, 2**64,
            -2**63, 0.0, -0.0, 0.5, 1e308, float("inf"), float("nan"), True, False, None,
            "text", b"bytes", 1j]
DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
          "uint32", "uint64", "bool_", "complex64", "complex128", "object", "str_"]
UNSUPPORTED = [
    "'abc'.upper()", "'x'.join(())", "math.sin.__call__(1.0)", "[1, 2, 3]", "{1: 2}",
    "{1, 2}", "(lambda v: v)(1)", "print('x', end='')", "len('abc')", "open", "globals()",
    "x[::2]", "x[None]", "x.sum()", "np.zeros(3)", "cuda.threadIdx.w", "cuda.grid(4)",
    "cuda.shared.array(-1, float32)", "cuda.shared.array(2**40, float32)",
    "cuda.local.array(2**31, float64)", "cuda.local.array((2**32, 2**32), float32)",
    "undefined_name", "x.shape[7]", "float('nan')", "int(1e30)", "1 // 0", "1 % 0",
    "cuda.syncthreads()", "cuda.atomic.add(x, 0, 1)", "cuda.blockDim.x ** -1",
    "cuda.fp16.hadd(x, 1)", "cuda.fp16.hdiv(np.float16(1), np.float16(0))",
    "cuda.fp16.hmax(np.float16(1), 2.0)", "np.float16(1e10)", "kernel(x, out)",
    "(lambda: 1)()", "cuda.fp16.hsqrt(np.float16(-1))",
]
UNSUPPORTED_STATEMENTS = [
    "try:\n    pass\nexcept Exception:\n    pass", "with open('f') as f:\n    pass",
    "yield 1", "del x", "global g", "import os", "class C:\n    pass", "raise ValueError('x')",
    "raise", "raise ValueError(x)",
    "assert False, 'fuzz'", "for q in range(3):\n    break\nelse:\n    pass",
    "while True:\n    pass", "return 1", "async def f():\n    pass", "x = 1",
    "cuda.syncthreads()", "first_use = first_use + 1", "kernel(x, out)",
    "if cuda.threadIdx.x % 3 == 1:\n    return",
]


def nodes_of(tree, kinds):
    return [n for n in ast.walk(tree) if isinstance(n, kinds)]


def statement_lists(tree):
    """(owner, field) of every list of statements, the kernel's body included."""
    found = []
    for node in ast.walk(tree):
        for field in ("body", "orelse"):
            value = getattr(node, field, None)
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                found.append((node, field))
    return found


def swap_operator(tree, rng):
    candidates = nodes_of(tree, (ast.BinOp, ast.AugAssign, ast.Compare, ast.BoolOp, ast.UnaryOp))
    if not candidates:
        return False
    node = rng.choice(candidates)
    if isinstance(node, (ast.BinOp, ast.AugAssign)):
        node.op = rng.choice(BINARY_OPERATORS)()
    elif isinstance(node, ast.Compare):
        node.ops[rng.randrange(len(node.ops))] = rng.choice(COMPARISONS)()
    elif isinstance(node, ast.BoolOp):
        node.op = rng.choice([ast.And, ast.Or])()
    else:
        node.op = rng.choice([ast.Not, ast.USub, ast.Invert, ast.UAdd])()
    return True


def delete_statement(tree, rng):
    owner, field = rng.choice(statement_lists(tree))
    if not getattr(owner, field):
        return False
    body = getattr(owner, field)
    del body[rng.randrange(len(body))]
    if not body and field == "body":
        body.append(ast.Pass())
    return True


def duplicate_statement(tree, rng):
    owner, field = rng.choice(statement_lists(tree))
    body = getattr(owner, field)
    index = rng.randrange(len(body))
    body.insert(rng.randrange(len(body) + 1), copy.deepcopy(body[index]))
    return True


def move_statement(tree, rng):
    lists = statement_lists(tree)
    (source, source_field), (target, target_field) = rng.choice(lists), rng.choice(lists)
    body = getattr(source, source_field)
    if len(body) < 2:
        return False
    statement = body.pop(rng.randrange(len(body)))
    destination = getattr(target, target_field)
    destination.insert(rng.randrange(len(destination) + 1), statement)
    return True


def change_literal(tree, rng):
    candidates = nodes_of(tree, ast.Constant)
    if not candidates:
        return False
    rng.choice(candidates).value = rng.choice(LITERALS)
    return True


def change_dtype(tree, rng):
    candidates = [n for n in nodes_of(tree, (ast.Name, ast.Attribute))
                  if (n.id if isinstance(n, ast.Name) else n.attr)
                  in ("float16", "float32", "float64", "int32", "int64")]
    if candidates:
        node = rng.choice(candidates)
        dtype = rng.choice(DTYPES)
        if isinstance(node, ast.Name):
            node.id = "np." + dtype if hasattr(node, "id") else dtype
        else:
            node.attr = dtype
        return True
    # A conversion of an assigned value instead.
    assigns = nodes_of(tree, ast.Assign)
    if not assigns:
        return False
    node = rng.choice(assigns)
    node.value = ast.Call(func=ast.parse("np." + rng.choice(DTYPES), mode="eval").body,
                          args=[node.value], keywords=[])
    return True


def swap_names(tree, rng):
    names = nodes_of(tree, ast.Name)
    if len(names) < 2:
        return False
    a, b = rng.sample(names, 2)
    a.id, b.id = b.id, a.id
    return True


def insert_unsupported(tree, rng):
    if rng.random() < 0.5:
        expressions = [n for n in nodes_of(tree, ast.expr) if not isinstance(n, ast.Name)
                       or not isinstance(getattr(n, "ctx", None), ast.Store)]
        if not expressions:
            return False
        target = rng.choice(expressions)
        replacement = ast.parse(rng.choice(UNSUPPORTED), mode="eval").body
        for parent in ast.walk(tree):
            for field, value in ast.iter_fields(parent):
                if value is target:
                    setattr(parent, field, replacement)
                    return True
                if isinstance(value, list) and target in value:
                    value[value.index(target)] = replacement
                    return True
        return False
    owner, field = rng.choice(statement_lists(tree))
    body = getattr(owner, field)
    body.insert(rng.randrange(len(body) + 1),
                ast.parse(rng.choice(UNSUPPORTED_STATEMENTS)).body[0])
    return True


def exit_threads(tree, rng):
    """Some threads return early, before the barriers that follow (or a
    barrier after a return, where there was none): a GPU's exited threads
    no longer take part in the block's barriers."""
    owner, field = rng.choice(statement_lists(tree))
    body = getattr(owner, field)
    condition = rng.choice(["cuda.threadIdx.x >= 16", "cuda.threadIdx.x % 2 == 1",
                            "cuda.grid(1) >= 40", "cuda.blockIdx.x == 1", "cuda.laneid > 30"])
    statements = ast.parse(f"if {condition}:\n    return").body
    if rng.random() < 0.5:
        statements.append(ast.parse("cuda.syncthreads()").body[0])
    position = rng.randrange(len(body) + 1)
    body[position:position] = statements
    return True


def toggle_debug(kernel, rng):
    kernel.decorator_list = [ast.parse(
        "cuda.jit(debug=True)" if rng.random() < 0.7 else "cuda.jit", mode="eval").body]
    return True


MUTATIONS = [swap_operator, delete_statement, duplicate_statement, move_statement,
             change_literal, change_dtype, swap_names, insert_unsupported, exit_threads,
             toggle_debug]


def mutate(source, rng):
    """A mutant of source that is valid Python, or None. Only the kernel's
    definition (its decorator and body) is mutated."""
    for _ in range(5):
        tree = ast.parse(source)
        kernel = tree.body[0]
        for _ in range(rng.choice([1, 1, 2, 3])):
            rng.choice(MUTATIONS)(kernel, rng)
        ast.fix_missing_locations(tree)
        try:
            text = ast.unparse(tree)
            compile(text, "<mutant>", "exec")
            return text
        except (SyntaxError, ValueError, TypeError, RecursionError):
            continue
    return None


# --- running one mutant in a forked process --------------------------------

LOCATION = re.compile(r"\.py:\d+")


def classify(error):
    import tidal.errors
    text = f"{type(error).__name__}: {error}"
    if isinstance(error, tidal.errors.CompileError):
        return ("rejected" if LOCATION.search(str(error)) else "unlocated"), text
    if isinstance(error, KeyboardInterrupt):
        return "interrupted", text
    if isinstance(error, (IndexError, AssertionError, ZeroDivisionError, OverflowError)):
        return "rejected", text  # the kernel's own runtime checks
    if str(error).startswith("In function ") and " tid=[" in str(error):
        return "rejected", text  # an exception the kernel raised, located as Numba's are
    if isinstance(error, RuntimeError) and "faulted" in str(error):
        return "fault", text  # a wild access reported, the process alive
    if isinstance(error, (TypeError, ValueError)) and LOCATION.search(str(error)) is None \
            and "argument" in str(error):
        return "rejected", text  # arguments that no longer match the mutant
    return ("rejected" if LOCATION.search(str(error)) else "unlocated"), text


def run_kernel_file(path, arguments):
    """Runs one mutant (in a worker): (outcome, text, clean). Clean: no kernel
    ran, so the worker may take another input; a kernel that ran may have
    written out of bounds unnoticed (an unchecked launch, as on a GPU) and
    damaged the worker's heap, which a later input would then be blamed for."""
    import importlib.util
    import warnings
    import numpy as np
    import tidal.errors
    # A mutant's warnings (debug=True with opt=True, small grids, host
    # arrays) are not outcomes: they would only clutter make check.
    warnings.simplefilter("ignore")
    try:
        spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        kernel = module.kernel
    except KeyboardInterrupt as error:
        return (*classify(error), False)
    except BaseException as error:  # noqa: BLE001 - Python's own error, before tidal
        return "not a kernel", f"{type(error).__name__}: {error}", True
    try:
        kernel[2, 32](*arguments(np))
    except BaseException as error:  # noqa: BLE001 - everything is an outcome
        return (*classify(error), isinstance(error, tidal.errors.CompileError))
    return "ok", "", False


def warm_up():
    """Compiles (without launching: no cpu-target threads yet, which a fork
    would not copy) a small kernel, so that every worker starts with the
    compiler's one-time setup done."""
    from tidal import cuda

    @cuda.jit
    def warm(x):
        x[cuda.grid(1)] = 1.0
    warm.compile("void(float64[::1])")


def run_input(request):
    """A worker's request: a mutant file and the corpus kernel it came from."""
    return run_kernel_file(request["path"], corpus.KERNELS[request["kernel"]][1])


def run_one(path, arguments):
    """Runs one file in a worker of its own: (outcome, text)."""
    answers = []
    workers.run([(path, {})], lambda _: run_kernel_file(path, arguments), 1, LAUNCH_SECONDS,
                ANSWER_SECONDS, lambda _, outcome, text: answers.append((outcome, text)))
    return answers[0]


def inputs(options, rng, work, tally):
    """The mutants ((index, text, path), request), the same for a seed
    whatever the jobs (a mutant that is not Python is only counted)."""
    for index in range(options.count):
        kernel = rng.randrange(len(corpus.KERNELS))
        mutant = mutate(corpus.KERNELS[kernel][0], rng)
        if mutant is None:
            tally.counts["not python"] += 1
            continue
        text = corpus.PRELUDE + mutant + "\n"
        path = os.path.join(work, f"mutant_{options.seed}_{index}.py")
        with open(path, "w") as f:
            f.write(text)
        yield (index, text, path), {"path": path, "kernel": kernel}


def main():
    options = common.parse_arguments(__doc__.splitlines()[0], default_count=100, extra=lambda p:
                                     p.add_argument("--launch-seconds", type=float,
                                                    default=LAUNCH_SECONDS,
                                                    help="SIGINT a mutant after this long"))
    sys.path.insert(0, os.path.join(os.path.abspath(options.build), "python"))
    # Endless mutants are stopped with SIGINT. A shell starts a background
    # job with SIGINT ignored, and Python then keeps ignoring it: every
    # endless mutant was a "hang". The workers need Python's handler.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    os.environ["TIDAL_TARGET"] = "cpu"
    os.environ.setdefault("TIDAL_CPU_THREADS", "2")
    import numpy  # noqa: F401 - imported once, before the forks
    import tidal.cuda  # noqa: F401
    import tidal.errors  # noqa: F401
    warm_up()
    rng = random.Random(options.seed)
    tally = common.Tally("fuzz-frontend", options)
    work = os.path.join(options.out, "work")
    os.makedirs(work, exist_ok=True)

    def items():
        for item in inputs(options, rng, work, tally):
            if tally.out_of_time():
                return
            yield item

    def on_result(item, outcome, message):
        index, text, path = item
        header = (f"# fuzz_frontend.py seed {options.seed} input {index}: {outcome}: "
                  f"{message[:200]}\n# launched as kernel[2, 32] on the corpus arguments of "
                  f"the kernel it came from\n")
        tally.record(outcome, index, message, header + text, ".py")
        if os.path.exists(path):  # a crash after the answer comes second
            os.unlink(path)

    workers.run(items(), run_input, options.jobs, options.launch_seconds, ANSWER_SECONDS,
                on_result)
    return tally.finish()


if __name__ == "__main__":
    common.main_guard(main)
