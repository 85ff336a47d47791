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
COMPILE_SECONDS = 20  # load and compile, before the launch starts; then SIGINT
LAUNCH_CPU_SECONDS = 0.25  # CPU time of a launch (its threads together); then SIGINT
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
    # This round's constructs: ufuncs, cache hints, array methods, fp16
    # functions, tuple indices, print.
    "np.sin(x)", "np.add(x, 1.0, x)", "np.frexp(1.0)", "np.logaddexp(1.0, 2.0)",
    "np.add(1, 2, out=x)", "np.sin(np.float16(1))", "np.left_shift(1.5, 2)",
    "np.greater(1j, 2j)", "np.remainder(7, 0)", "np.sqrt(x, out)",
    "cuda.ldcg(x, 2**40)", "cuda.ldcg(x, (0, 0))", "cuda.ldca(1.0, 0)", "cuda.ldcs(x, 0.5)",
    "cuda.stcs(x, 0, 'a')", "cuda.stcg(x, -1, 1)", "cuda.ldlu(x, True)", "cuda.ldcv(x, -65)",
    "x.T[0]", "x.reshape(-1, -1)", "x.reshape(3, 5)", "x.T.reshape(-1)", "x.item()",
    "x.copy()", "x.astype(np.int32)", "x.ravel()[0]", "x.dtype.type(1.5)",
    "cuda.local.array(4, x.dtype)", "x.flatten()", "x[::2].ravel()", "x.reshape(())",
    "cuda.fp16.hsin(1.0)", "cuda.fp16.hexp(np.float16(1e4))", "cuda.fp16.hlog(np.float16(-1))",
    "cuda.fp16.hrsqrt(np.float16(0))", "cuda.fp16.hsin(x)", "cuda.fp16.hexp10(1)",
    "print((1, (2, 3.5)), cuda.threadIdx)", "(1, 2.5)[cuda.threadIdx.x % 2]", "x[(0,)]",
    "x[(0, 0, 0)]", "x[(cuda.threadIdx.x, 1)]",
    # bfloat16, fp8 and pointers misused.
    "cuda.bf16.hadd(x, 1)", "cuda.bfloat16(x)", "cuda.bf16.hsqrt(1.0)",
    "cuda.bf16.hdiv(cuda.bfloat16(1), cuda.bfloat16(0))", "cuda.bfloat16(1e39) + 1j",
    "cuda.local.array(3, cuda.bfloat16)[5]", "x.view(cuda.bfloat16)",
    "cuda.fp8.fp8_e4m3(x)", "cuda.fp8.fp8_e4m3(1.0) + cuda.fp8.fp8_e5m2(2.0)",
    "cuda.fp8.fp8_e4m3(1e9)", "float32(cuda.fp8.fp8_e8m0(-1.0))",
    "cuda.carray(x, 4)", "cuda.carray(1, 4)", "cuda.farray(x, (2, 2))", "cuda.carray(x, -1)",
    "cuda.fp16.atomicAdd(x, np.float16(1))", "ffi.from_buffer(x)",
]
UNSUPPORTED_STATEMENTS = [
    "try:\n    pass\nexcept Exception:\n    pass", "with open('f') as f:\n    pass",
    "yield 1", "del x", "global g", "import os", "class C:\n    pass", "raise ValueError('x')",
    "raise", "raise ValueError(x)",
    "assert False, 'fuzz'", "for q in range(3):\n    break\nelse:\n    pass",
    "while True:\n    pass", "return 1", "async def f():\n    pass", "x = 1",
    "cuda.syncthreads()", "first_use = first_use + 1", "kernel(x, out)",
    "if cuda.threadIdx.x % 3 == 1:\n    return",
    "fz_v = 1\nfz_v = (1, 2)", "fz_v = 1.5\nfz_v = None", "fz_v = x\nfz_v = 2",
    "print(cuda.gridDim, (1, 2.5), cuda.threadIdx.x)", "np.sin(x, x)",
    "cuda.stcs(x, cuda.grid(1), 1)",
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


# The kernel's decorator: debug=True mostly (its checks), extra passes at the
# pipeline's points (real ones, and texts that are not pipelines).
DECORATORS = [
    "cuda.jit(debug=True)", "cuda.jit(debug=True)", "cuda.jit(debug=True)", "cuda.jit",
    "cuda.jit(passes={'after-lowering': 'instcombine'})",
    "cuda.jit(passes={'after-frontend': 'function(sroa,gvn)', 'after-lowering': 'loop-unroll'})",
    "cuda.jit(passes={'after-lowering': 'no-such-pass'})",
    "cuda.jit(passes={'after-frontend': 'function(instcombine'})",
    "cuda.jit(passes={'after-lowering': 'instcombine'}, debug=True)",
    "cuda.jit(fastmath=True)", "cuda.jit(opt=False)", "cuda.jit(lineinfo=True)",
]


def change_decorator(kernel, rng):
    kernel.decorator_list = [ast.parse(rng.choice(DECORATORS), mode="eval").body]
    return True


def retype_variable(tree, rng):
    """A variable assigned again with a value of another type (Numba unifies
    numbers; a tuple, None or an array after a number is a TypingError)."""
    candidates = [(owner, field, i) for owner, field in statement_lists(tree)
                  for i, statement in enumerate(getattr(owner, field))
                  if isinstance(statement, ast.Assign) and len(statement.targets) == 1
                  and isinstance(statement.targets[0], ast.Name)]
    if not candidates:
        return False
    owner, field, index = rng.choice(candidates)
    name = getattr(owner, field)[index].targets[0].id
    value = rng.choice([f"{name} * 1.5", f"({name}, 1)", "True", "np.float16(1)", "None",
                        f"complex({name})", f"np.int8({name})", "(1, 2.5)", f"-{name}"])
    getattr(owner, field).insert(index + 1, ast.parse(f"{name} = {value}").body[0])
    return True


SIMPLE_STATEMENTS = (ast.Assign, ast.AugAssign, ast.Expr, ast.Return)


def tuple_index(tree, rng):
    """An index made a variable first (x[i, j] -> at = (i, j); x[at])."""
    candidates = [(owner, field, i, node) for owner, field in statement_lists(tree)
                  for i, statement in enumerate(getattr(owner, field))
                  if isinstance(statement, SIMPLE_STATEMENTS)
                  for node in ast.walk(statement)
                  if isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Slice)]
    if not candidates:
        return False
    owner, field, index, node = rng.choice(candidates)
    index_value = node.slice
    if not isinstance(index_value, ast.Tuple) and rng.random() < 0.5:
        index_value = ast.Tuple(elts=[index_value], ctx=ast.Load())  # x[(i,)]
    getattr(owner, field).insert(index, ast.Assign(targets=[ast.Name("fz_at", ast.Store())],
                                                   value=index_value))
    node.slice = ast.Name("fz_at", ast.Load())
    return True


# Names that mean kindred things; a call swapped within its family keeps its
# shape or not (another arity, another argument kind).
FAMILIES = [
    ["ldca", "ldcg", "ldcs", "ldlu", "ldcv"],
    ["stcg", "stcs", "stwb", "stwt"],
    ["sin", "cos", "sqrt", "exp", "log", "absolute", "negative", "floor", "rint", "isnan",
     "add", "multiply", "maximum", "arctan2", "power", "floor_divide", "remainder",
     "left_shift", "logical_and", "frexp", "modf", "logaddexp"],
    ["hsin", "hcos", "htanh", "hexp", "hexp2", "hexp10", "hlog", "hlog2", "hlog10", "hsqrt",
     "hrsqrt", "hrcp", "hceil", "hfloor", "htrunc", "hrint", "habs", "hneg", "hadd", "hmul",
     "hfma", "hmax", "hmin_nan", "heq", "hlt"],
    ["hadd", "hsub", "hmul", "hdiv", "hfma", "hneg", "habs", "hmax", "hmin", "hsqrt", "hlt",
     "heq", "hmul_sat", "hfma_relu", "bfloat16_as_ushort", "ushort_as_bfloat16"],
    ["fp8_e4m3", "fp8_e5m2", "fp8_e8m0", "bfloat16", "float16"],
    ["carray", "farray"],
    ["T", "reshape", "ravel", "item", "copy", "flatten", "astype", "transpose", "dtype",
     "itemsize", "nbytes", "shape", "size", "ndim", "strides"],
]


def swap_function(tree, rng):
    """An attribute (cuda.bf16.hadd) or a name (fp8_e4m3) swapped within its family."""
    candidates = [(node, "attr" if isinstance(node, ast.Attribute) else "id", family)
                  for node in nodes_of(tree, (ast.Attribute, ast.Name))
                  for family in FAMILIES
                  if getattr(node, "attr", getattr(node, "id", None)) in family]
    if not candidates:
        return False
    node, field, family = rng.choice(candidates)
    setattr(node, field, rng.choice(family))
    return True


MUTATIONS = [swap_operator, delete_statement, duplicate_statement, move_statement,
             change_literal, change_dtype, swap_names, insert_unsupported, exit_threads,
             change_decorator, retype_variable, tuple_index, swap_function]


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
# A CUDA C++ error of linked code (a .cu file or a cuda.CUSource, by its
# name): located in that code.
FOREIGN_LOCATION = re.compile(r"^\S+:\d+:\d+: CUDA C\+\+", re.M)


def classify(error):
    import tidal.errors
    text = f"{type(error).__name__}: {error}"
    if isinstance(error, tidal.errors.CompileError):
        located = LOCATION.search(str(error)) or FOREIGN_LOCATION.search(str(error))
        return ("rejected" if located else "unlocated"), text
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


def tidal_frames(error):
    """The frames of error's traceback in tidal's package: (code, line)."""
    import tidal
    package = os.path.dirname(tidal.__file__) + os.sep
    frame = error.__traceback__
    while frame is not None:
        if frame.tb_frame.f_code.co_filename.startswith(package):
            yield frame.tb_frame.f_code, frame.tb_lineno
        frame = frame.tb_next


def raised_in_tidal(error):
    """Whether error came from tidal's package: raised where the mutant's
    module called it (a decorator checking its arguments, a host call of a
    device-only function), which the traceback locates at the user's line."""
    return any(True for _ in tidal_frames(error))


def bad_signature(error):
    """A declared signature that does not parse (cuda.jit('text')): an error
    of the decorator's argument, which its traceback locates."""
    return isinstance(error, (TypeError, ValueError)) and "signature" in str(error)


def compiled_by_decorator(error):
    """Whether error came from compiling a kernel's declared signatures in
    its decorator (Dispatcher._declare): an error of the kernel's body, which
    must say where in the body, as a launch's compile error must."""
    import linecache
    return any("._declare(" in linecache.getline(code.co_filename, line)
               for code, line in tidal_frames(error))


def run_kernel_file(path, arguments):
    """Runs one mutant (in a worker): (outcome, text, clean). Clean: no kernel
    ran, so the worker may take another input; a kernel that ran may have
    written out of bounds unnoticed (an unchecked launch, as on a GPU) and
    damaged the worker's heap, which a later input would then be blamed for.
    The kernel is compiled for the arguments' types first, then launched
    (the launch finds it compiled): the worker tells the fuzzer when the
    launch starts (workers.progress), from which its short time limit runs."""
    import importlib.util
    import time
    import warnings
    import numpy as np
    import tidal.errors
    # A mutant's warnings (debug=True with opt=True, small grids, host
    # arrays) are not outcomes: they would only clutter make check.
    warnings.simplefilter("ignore")
    started, started_cpu = time.monotonic(), time.process_time()
    try:
        spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        kernel = module.kernel
    except KeyboardInterrupt as error:
        return (*classify(error), False)
    except BaseException as error:  # noqa: BLE001 - Python's own error, or tidal's
        if compiled_by_decorator(error) and not bad_signature(error):  # the body's errors
            return (*classify(error), True)
        if raised_in_tidal(error):  # a check of the decorator's arguments or a host
            return "rejected", f"{type(error).__name__}: {error}", True  # call: at its line
        return "not a kernel", f"{type(error).__name__}: {error}", True
    loaded, loaded_cpu = time.monotonic(), time.process_time()
    launched_cpu = None
    try:
        values = arguments(np)
        compile_first(kernel, values)
        launched_cpu = time.process_time()
        workers.progress(phase="launch", load=loaded - started, compile=time.monotonic() - loaded,
                         **{"load cpu": loaded_cpu - started_cpu,
                            "compile cpu": launched_cpu - loaded_cpu})
        kernel[2, 32](*values)
    except BaseException as error:  # noqa: BLE001 - everything is an outcome
        return (*classify(error), isinstance(error, tidal.errors.CompileError))
    finally:
        now = time.process_time()
        workers.progress(**({"launch cpu": now - launched_cpu} if launched_cpu is not None else
                            {"compile cpu": now - loaded_cpu}))
    return "ok", "", False


def compile_first(kernel, values):
    """Compiles kernel for the types of values, as its launch would, if it is
    a kernel of tidal's whose arguments have types; anything else is left to
    the launch, which raises what it raises. A kernel with declared
    signatures was compiled by its decorator (for those, which its launch
    converts the arguments to: an address to a CPointer)."""
    if getattr(kernel, "declared_signatures", ()):
        return
    try:
        types = kernel._argument_types(values)
    except BaseException:  # noqa: BLE001 - not a dispatcher, or an argument without a type
        return
    kernel.compile(types)


def warm_up():
    """Compiles (without launching: no cpu-target threads yet, which a fork
    would not copy) a small kernel, so that every worker starts with the
    compiler's one-time setup done."""
    from tidal import cuda

    @cuda.jit
    def warm(x):
        x[cuda.grid(1)] = 1.0
    warm.compile("void(float64[::1])")


_quiet = False


def run_input(request):
    """A worker's request: a mutant file and the corpus kernel it came from.
    What kernels print (print() of the corpus and of mutants) goes nowhere."""
    global _quiet
    if not _quiet:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
        _quiet = True
    return run_kernel_file(request["path"], corpus.KERNELS[request["kernel"]][1])


def run_one(path, arguments):
    """Runs one file in a worker of its own: (outcome, text)."""
    answers = []
    workers.run([(path, {})], lambda _: run_kernel_file(path, arguments), 1, LAUNCH_SECONDS,
                ANSWER_SECONDS, lambda _, outcome, text: answers.append((outcome, text)),
                compile_seconds=COMPILE_SECONDS)
    return answers[0]


def inputs(options, rng, work, tally):
    """The mutants ((index, text, path), request), the same for a seed
    whatever the jobs (a mutant that is not Python is only counted)."""
    for index in range(options.count):
        kernel = rng.choices(range(len(corpus.KERNELS)), corpus.WEIGHTS)[0]
        mutant = mutate(corpus.KERNELS[kernel][0], rng)
        if mutant is None:
            tally.counts["not python"] += 1
            continue
        text = corpus.PRELUDE + mutant + "\n"
        path = os.path.join(work, f"mutant_{options.seed}_{index}.py")
        with open(path, "w") as f:
            f.write(text)
        yield (index, text, path), {"path": path, "kernel": kernel}


def options_of(parser):
    parser.add_argument("--launch-seconds", type=float, default=LAUNCH_SECONDS,
                        help="SIGINT a kernel this long after its launch started")
    parser.add_argument("--compile-seconds", type=float, default=COMPILE_SECONDS,
                        help="SIGINT a mutant whose load and compile take longer")
    parser.add_argument("--launch-cpu-seconds", type=float, default=LAUNCH_CPU_SECONDS,
                        help="SIGINT a kernel whose launch has used this much CPU time "
                             "(0: no such limit)")
    parser.add_argument("--timings", action="store_true",
                        help="print where the time went, per outcome")


def main():
    options = common.parse_arguments(__doc__.splitlines()[0], default_count=100,
                                     extra=options_of)
    sys.path.insert(0, os.path.join(os.path.abspath(options.build), "python"))
    # Endless mutants are stopped with SIGINT. A shell starts a background
    # job with SIGINT ignored, and Python then keeps ignoring it: every
    # endless mutant was a "hang". The workers need Python's handler.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    os.environ["TIDAL_TARGET"] = "cpu"
    os.environ.setdefault("TIDAL_CPU_THREADS", "2")
    # CUDA C++ that mutants link (cuda.CUSource) is cached here, not in the
    # user's cache folder.
    os.environ.setdefault("TIDAL_CACHE_DIR", os.path.join(os.path.abspath(options.out), "cache"))
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
        # Every line of the message commented (Clang's run over several), so
        # that the reproducer runs as written.
        summary = "\n# ".join(message[:200].splitlines())
        header = (f"# fuzz_frontend.py seed {options.seed} input {index}: {outcome}: "
                  f"{summary}\n# launched as kernel[2, 32] on the corpus arguments of "
                  f"the kernel it came from\n")
        tally.record(outcome, index, message, header + text, ".py")
        if os.path.exists(path):  # a crash after the answer comes second
            os.unlink(path)

    timings = workers.Timings() if options.timings else None
    workers.run(items(), run_input, options.jobs, options.launch_seconds, ANSWER_SECONDS,
                on_result, compile_seconds=options.compile_seconds,
                launch_cpu_seconds=options.launch_cpu_seconds or None, timings=timings)
    if timings:
        print("\n".join(timings.report(options.jobs)), flush=True)
    return tally.finish()


if __name__ == "__main__":
    common.main_guard(main)
