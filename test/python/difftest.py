"""Differential testing of the kernel language against CPython.

A generator writes random small programs in the language's subset: integer,
float and complex arithmetic of mixed types (with abs, .real/.imag,
conjugate(), complex(), ** and cmath's functions), comparisons, branches,
loops, calls of device functions. Each program is a device function ``f(i, a, b)`` called by
a kernel for every thread ``i``; CPython runs the same ``f`` for each ``i``.
Integers must agree bit for bit, floats and complex numbers within a few ulps.

    /usr/bin/python3 test/python/difftest.py --seed 7 --count 500 --save failures/

runs any number of programs and saves each failing one as a standalone
reproducer (run it with PYTHONPATH=build/python). make check runs a few
hundred through test_differential.py.
"""

import argparse
import importlib.util
import math
import os
import random
import sys
import tempfile
import textwrap

import numpy as np

THREADS = 48
# The kinds of values programs compute with (complex: complex128).
KINDS = ("int", "float", "complex")


class Generator:
    """Random programs whose values stay small, so that CPython's unbounded
    ints and int64 agree, and that never divide by zero."""

    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.seed = seed

    def program(self):
        helpers = [self.function(f"g{k}", [], depth=0) for k in range(self.rng.randint(0, 2))]
        main = self.function("f", [h for h in helpers], depth=0, parameters=("i", "a", "b"))
        return helpers, main

    # A function: statements over variables of a fixed kind (int or float),
    # then a return of an expression.
    def function(self, name, callees, depth, parameters=("x", "y")):
        self.callees = callees
        self.kinds = {p: "int" for p in parameters}
        if "b" in parameters:
            self.kinds["b"] = "float"
        if name.startswith("g"):
            self.kinds["y"] = self.rng.choice(["int", "float"])
        lines = []
        for _ in range(self.rng.randint(2, 6)):
            lines += self.statement(1)
        kind = self.rng.choice(KINDS)
        returned = self.expression(kind, 3)
        if kind == "complex":
            lines.append(f"return {returned}")
        else:
            lines += self.tuple_statement(kind)
            lines.append(f"return {returned} + t_acc")
        body = textwrap.indent("\n".join(lines), "    ")
        return {"name": name, "parameters": parameters, "kind": kind,
                "kinds": dict(self.kinds), "source": f"def {name}({', '.join(parameters)}):\n{body}\n"}

    def variable(self, kind):
        names = [v for v, k in self.kinds.items() if k == kind]
        return self.rng.choice(names) if names else None

    def new_name(self):
        self.counter = getattr(self, "counter", 0) + 1
        return f"v{self.counter}"

    def statement(self, depth):
        r = self.rng.random()
        kind = self.rng.choice(KINDS)
        if r < 0.45 or depth > 2:
            target = self.variable(kind) if self.rng.random() < 0.4 else None
            if target is not None and target.startswith("v") and self.rng.random() < 0.3:
                op = self.rng.choice(["+", "-"]) if kind != "int" else self.rng.choice(["+", "-", "^", "|"])
                return [f"{target} {op}= {self.expression(kind, 2)}"]
            if target is None or not target.startswith("v"):
                target = self.new_name()
            line = f"{target} = {self.expression(kind, 3)}"
            self.kinds[target] = kind
            return [line]
        if r < 0.7:
            # if/else; a variable assigned in both branches (int in one and
            # float in the other unifies to float64).
            target = self.new_name()
            target_kind = self.rng.choice(KINDS)
            # int and float unify to float, float and complex to complex.
            wider = {"float": "int", "complex": "float"}.get(target_kind)
            first_kind = wider if wider and self.rng.random() < 0.5 else target_kind
            lines = [f"if {self.condition()}:"]
            lines += ["    " + s for s in self.nested(depth)]
            lines.append(f"    {target} = {self.expression(first_kind, 2)}")
            lines.append("else:")
            lines += ["    " + s for s in self.nested(depth)]
            lines.append(f"    {target} = {self.expression(target_kind, 2)}")
            self.kinds[target] = target_kind
            return lines
        if r < 0.9:
            acc = self.new_name()
            counter = "k" + self.new_name()
            start = self.rng.randint(-3, 3)
            stop = self.rng.randint(-3, 6)
            step = self.rng.choice([1, 1, 2, -1, -2])
            lines = [f"{acc} = {self.expression(kind, 1)}",
                     f"for {counter} in range({start}, {stop}, {step}):"]
            self.kinds[acc] = kind
            visible = dict(self.kinds)
            self.kinds[counter] = "int"
            if self.rng.random() < 0.3:
                lines.append(f"    if {counter} == {self.rng.randint(-2, 4)}:")
                lines.append(f"        {self.rng.choice(['continue', 'break'])}")
            lines.append(f"    {acc} = {acc} + {self.expression(kind, 2)}")
            # The counter is unbound after a loop that did not run.
            self.kinds = {v: k for v, k in visible.items() if v != counter}
            return lines
        # while with a bounded counter
        counter = self.new_name()
        acc = self.new_name()
        first = [f"{counter} = 0", f"{acc} = {self.expression(kind, 1)}"]
        self.kinds[counter] = "int"
        self.kinds[acc] = kind
        return first + [f"while {counter} < {self.rng.randint(0, 4)}:",
                         f"    {counter} += 1",
                         f"    {acc} = {acc} - {self.expression(kind, 2)}"]

    def tuple_statement(self, kind):
        """Tuples and iteration (for over a tuple, enumerate, zip with a
        range, a run-time index, `in`), accumulated into t_acc, which the
        return adds. Drawn from a generator of their own, so that the rest
        of each program is what the seed gave before they were added."""
        main_rng, self.rng = self.rng, random.Random(self.seed * 7919 + len(self.kinds))
        try:
            zero = "0" if kind == "int" else "0.0"
            cast = "" if kind == "int" else "float"
            items = [f"{cast}({self.expression(kind, 1)})" for _ in range(self.rng.randint(1, 4))]
            tup = "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
            form = self.rng.randint(0, 4)
            lines = [f"t_acc = {zero}"]
            if form == 0:
                lines += [f"for t_e in {tup}:", "    t_acc = t_acc + t_e"]
            elif form == 1:
                lines += [f"for t_j, t_e in enumerate({tup}, {self.rng.randint(-2, 2)}):",
                          "    t_acc = t_acc + t_j * t_e"]
            elif form == 2:
                start, stop = self.rng.randint(-2, 2), self.rng.randint(-2, 4)
                lines += [f"for t_e, t_u in zip({tup}, range({start}, {stop})):",
                          "    t_acc = t_acc + t_e * t_u"]
            elif form == 3:
                lines += [f"t_t = {tup}",
                          f"t_acc = t_t[({self.expression('int', 1)}) % {len(items)}]"]
            else:
                lines += [f"t_acc = {cast}(1 if {self.expression(kind, 1)} in {tup} else 2)"]
            return lines
        finally:
            self.rng = main_rng

    def nested(self, depth):
        """A statement in a branch: what it defines is not visible after."""
        visible = dict(self.kinds)
        lines = self.statement(depth + 1)
        self.kinds = visible
        return lines

    def condition(self):
        op = self.rng.choice(["<", "<=", ">", ">=", "==", "!="])
        kind = self.rng.choice(["int", "float"])
        c = f"{self.expression(kind, 1)} {op} {self.expression(kind, 1)}"
        r = self.rng.random()
        if r < 0.2:
            c = f"{c} and {self.expression('int', 1)} % 2 == 0"
        elif r < 0.35:
            c = f"not ({c})"
        elif r < 0.45:
            c = f"{self.rng.randint(-5, 0)} < {self.expression('int', 1)} < {self.rng.randint(1, 9)}"
        return c

    def leaf(self, kind):
        v = self.variable(kind)
        if v is not None and self.rng.random() < 0.7:
            return v
        if kind == "int":
            return str(self.rng.randint(-9, 9))
        if kind == "complex":
            return repr(complex(round(self.rng.uniform(-4, 4), 2), round(self.rng.uniform(-4, 4), 2)))
        return repr(round(self.rng.uniform(-4, 4), 2))

    # Expressions stay within small magnitudes: clamps before products and
    # powers, divisors of the form (abs(e) + 1).
    def expression(self, kind, depth):
        if depth <= 0 or self.rng.random() < 0.25:
            return self.leaf(kind)
        e = lambda k=kind: self.expression(k, depth - 1)  # noqa: E731
        small = lambda k=kind: f"min(max({e(k)}, -30), 30)"  # noqa: E731
        if kind == "complex":
            return self.complex_expression(depth)
        if kind == "int":
            choices = [
                lambda: f"({e()} + {e()})",
                lambda: f"({e()} - {e()})",
                lambda: f"({small()} * {small()})",
                lambda: f"({e()} // (abs({e()}) + 1))",
                lambda: f"({e()} // -(abs({e()}) + 1))",
                lambda: f"({e()} % (abs({e()}) + 1))",
                lambda: f"({e()} % -(abs({e()}) + 1))",
                lambda: f"({e()} & {e()})",
                lambda: f"({e()} | {self.rng.randint(0, 15)})",
                lambda: f"({e()} ^ {e()})",
                lambda: f"(min(max({e()}, -1000), 1000) << {self.rng.randint(0, 5)})",
                lambda: f"({e()} >> {self.rng.randint(0, 5)})",
                lambda: f"(-{e()})",
                lambda: f"(~{e()})",
                lambda: f"abs({e()})",
                lambda: f"max({e()}, {e()})",
                lambda: f"min({e()}, {e()}, {e()})",
                lambda: f"({small()} ** 2)",
                lambda: f"int({self.expression('float', depth - 1)})",
                lambda: f"({e()} if {self.condition()} else {e()})",
                lambda: self.call("int", depth),
            ]
        else:
            choices = [
                lambda: f"({e()} + {e('int')})",
                lambda: f"({e()} - {e()})",
                lambda: f"({small()} * {small()})",
                lambda: f"({e()} / (abs({e()}) + 1.0))",
                lambda: f"({e('int')} / (abs({e('int')}) + 1))",
                lambda: f"({e()} // (abs({e()}) + 0.5))",
                lambda: f"({e()} % (abs({e()}) + 0.25))",
                lambda: f"(-{e()})",
                lambda: f"abs({e()})",
                lambda: f"max({e()}, {e('int')})",
                lambda: f"float({e('int')})",
                lambda: f"({small()} ** 2)",
                lambda: f"(min(abs({e()}), 9.0) ** 0.5)",
                lambda: f"({e()} if {self.condition()} else {e('int')})",
                lambda: self.call("float", depth),
                lambda: f"abs({e('complex')})",
                lambda: f"{e('complex')}.{self.rng.choice(['real', 'imag'])}",
                lambda: f"cmath.phase({e('complex')})",
            ]
        return self.rng.choice(choices)()

    def complex_expression(self, depth):
        """Complex values stay small: products and powers of clamped parts,
        divisors away from zero, cmath's functions where they are finite."""
        if depth <= 0 or self.rng.random() < 0.25:
            return self.leaf("complex")
        e = lambda k="complex": self.expression(k, depth - 1)  # noqa: E731
        real = lambda: self.expression(self.rng.choice(["int", "float"]), depth - 1)  # noqa: E731
        clamped = lambda: f"complex(min(max({e()}.real, -30), 30), min(max({e()}.imag, -30), 30))"  # noqa: E731
        part = lambda limit: f"min(max({e('float')}, -{limit}), {limit})"  # noqa: E731
        choices = [
            lambda: f"({e()} + {e(self.rng.choice(KINDS))})",
            lambda: f"({real()} - {e()})",
            lambda: f"({clamped()} * {clamped()})",
            lambda: f"({e()} / (abs({e()}) + 1.0))",
            lambda: f"({e()} / complex(abs({e('float')}) + 1.0, {e('float')}))",
            lambda: f"(-{e()})",
            lambda: f"{e()}.conjugate()",
            lambda: f"complex({e('float')}, {e('int')})",
            lambda: f"({clamped()} ** 2)",
            lambda: f"(complex({part(9.0)}, {part(9.0)}) ** 0.5)",
            lambda: f"cmath.sqrt({e()})",
            lambda: f"cmath.exp(complex({part(5.0)}, {e('float')}))",
            lambda: f"cmath.log(complex(abs({e('float')}) + 0.5, {e('float')}))",
            lambda: f"cmath.{self.rng.choice(['sin', 'cos', 'tanh', 'atan', 'asinh'])}"
                    f"(complex({part(5.0)}, {part(5.0)}))",
            lambda: f"({e()} if {self.condition()} else {e('float')})",
            lambda: self.call("complex", depth),
        ]
        return self.rng.choice(choices)()

    def call(self, kind, depth):
        fitting = [h for h in self.callees if h["kind"] == kind]
        if not fitting or depth < 2:
            return self.leaf(kind)
        h = self.rng.choice(fitting)
        args = [self.expression("int", 1), self.expression(h["kinds"]["y"], 1)]
        return f"{h['name']}({', '.join(args)})"


def module_source(helpers, main, seed):
    """The program as a module: device functions and the kernel around f."""
    parts = [f"# difftest program, seed {seed}", "import cmath", "import numpy as np",
             "from tidal import cuda", ""]
    for fn in helpers + [main]:
        parts.append("@cuda.jit(device=True)")
        parts.append(fn["source"])
    parts.append(textwrap.dedent("""\
        @cuda.jit
        def kernel(a, b, out):
            i = cuda.grid(1)
            if i < out.size:
                out[i] = f(i, a[i], b[i])
        """))
    return "\n".join(parts)


def load(source, directory, name):
    path = os.path.join(directory, f"{name}.py")
    with open(path, "w") as handle:
        handle.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, path


def inputs(seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(-20, 21, THREADS).astype(np.int64)
    b = np.round(rng.uniform(-10, 10, THREADS), 3)
    return a, b


def agree(got, expected, kind):
    if kind == "int":
        return int(got) == expected
    if kind == "complex":
        return (agree(got.real, expected.real, "float")
                and agree(got.imag, expected.imag, "float"))
    if math.isnan(expected):
        return math.isnan(got)
    if math.isinf(expected):
        return got == expected
    return math.isclose(got, expected, rel_tol=1e-12, abs_tol=1e-12)


def run_one(seed, directory):
    """(None, source, kind) when tidal and CPython agree, else a description first."""
    helpers, main = Generator(seed).program()
    source = module_source(helpers, main, seed)
    module, path = load(source, directory, f"difftest_{seed}")
    a, b = inputs(seed)
    dtype = {"int": np.int64, "float": np.float64, "complex": np.complex128}[main["kind"]]
    out = np.zeros(THREADS, dtype=dtype)
    try:
        module.kernel[(THREADS + 31) // 32, 32](a, b, out)
    except Exception as error:  # a compile error is a failure too
        return f"tidal raised {type(error).__name__}: {error}", source, main["kind"]
    reference = module.f.py_func
    for i in range(THREADS):
        expected = reference(i, int(a[i]), float(b[i]))
        expected = {"int": int, "float": float, "complex": complex}[main["kind"]](expected)
        if not agree(out[i], expected, main["kind"]):
            return (f"thread {i}: tidal computed {out[i]!r}, CPython {expected!r} "
                    f"(a={a[i]}, b={b[i]})"), source, main["kind"]
    return None, source, main["kind"]


def reproducer(seed, source, message, kind):
    a, b = inputs(seed)
    dtype = {"int": "int64", "float": "float64", "complex": "complex128"}[kind]
    return source + textwrap.dedent(f"""

        # Failure seen: {message}
        if __name__ == "__main__":
            a = np.array({a.tolist()!r}, dtype=np.int64)
            b = np.array({b.tolist()!r})
            out = np.zeros({THREADS}, dtype=np.{dtype})
            kernel[{(THREADS + 31) // 32}, 32](a, b, out)
            for i in range({THREADS}):
                expected = f.py_func(i, int(a[i]), float(b[i]))
                print(i, out[i], expected, "" if out[i] == expected else "<-- differs")
        """)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0, help="first seed")
    parser.add_argument("--count", type=int, default=100, help="programs to run")
    parser.add_argument("--save", default="difftest-failures",
                        help="folder for reproducers of failing programs")
    args = parser.parse_args(argv)
    failures = 0
    with tempfile.TemporaryDirectory() as directory:
        sys.path.insert(0, directory)
        for seed in range(args.seed, args.seed + args.count):
            message, source, kind = run_one(seed, directory)
            if message is None:
                continue
            failures += 1
            os.makedirs(args.save, exist_ok=True)
            path = os.path.join(args.save, f"difftest_{seed}.py")
            with open(path, "w") as handle:
                handle.write(reproducer(seed, source, message, kind))
            print(f"seed {seed}: {message.splitlines()[0]}\n  saved {path}")
    print(f"{args.count - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
