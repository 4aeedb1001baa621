"""tools/mutate.py: the mutant generator is deterministic, makes only the one-token changes it names and never
touches comments, literals or preprocessor lines; one end-to-end mutant run (slow: it builds the library) runs only
with SIMDBIND_MUTATE=1."""

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import mutate  # noqa: E402

SOURCE = """\
#include <stdio.h>
#define LIMIT(a, b) ((a) < (b) ? (a) + 1 : \\
                     (b) - 2)
/* block: i < n && x + y 3 */
static int f(const int *p, int n, int x) {
    int s = 0;  // tail: a > b || c - d 7
    for (int i = 0; i < n; i++)
        s = s + p[i];
    if (x >= 4 && s > x) return -x;
    return s * 2.5f > "a<b+1"[0];
}
"""


def _code(text):
    return [(t.kind, t.text) for t in mutate.tokens(text)]


def test_the_candidates_of_a_source_are_exactly_the_named_operators():
    found = {(m.line, m.original, m.replacement, m.operator) for m in mutate.mutations("x.c", SOURCE)}
    assert found == {
        (6, "0", "1", "constant"),
        (7, "0", "1", "constant"),
        (7, "<", "<=", "comparison"),
        (7, "n", "(n - 1)", "bound"),
        (7, "n", "(n + 1)", "bound"),
        (8, "+", "-", "sign"),
        (9, ">=", ">", "comparison"),
        (9, "4", "5", "constant"),
        (9, "&&", "||", "logic"),
        (9, ">", ">=", "comparison"),
        (10, "2.5f", "3.5f", "constant"),
        (10, ">", ">=", "comparison"),
        (10, "0", "1", "constant"),
    }
    # Not mutated: the unary minus of `return -x`, `++`, the directive lines, the comments and the string.


def test_comments_literals_and_directives_are_never_touched():
    protected = [SOURCE.index("#define"), SOURCE.index("/* block"), SOURCE.index("// tail"), SOURCE.index('"a<b')]
    ends = [SOURCE.index("static"), SOURCE.index("*/") + 2, SOURCE.index("\n", protected[2]),
            SOURCE.index('"[0]') + 1]
    for mutation in mutate.mutations("x.c", SOURCE):
        assert not any(start <= mutation.offset < end for start, end in zip(protected, ends)), mutation.label
        assert mutation.line > 3  # the #include and the continued #define


@pytest.mark.parametrize("mutation", mutate.choose(seed=7, count=40), ids=lambda m: m.label)
def test_a_mutant_changes_exactly_one_token_of_its_source(mutation):
    text = (mutate.ROOT / mutation.path).read_text()
    mutated = mutation.apply(text)
    before, after = _code(text), _code(mutated)
    index = next(i for i, t in enumerate(mutate.tokens(text)) if t.offset == mutation.offset)
    replacement = _code(mutation.replacement)
    assert before[index] == _code(mutation.original)[0]
    assert after == before[:index] + replacement + before[index + 1:]
    assert mutated.count("\n") == text.count("\n")


def test_a_seed_names_the_same_mutants_and_another_seed_others():
    first = mutate.choose(seed=3, count=25)
    assert first == mutate.choose(seed=3, count=25)
    assert len(set(first)) == 25
    assert first != mutate.choose(seed=4, count=25)
    # a seeded draw samples every operator rather than one file's kind (which 25 mutants may or may not show)
    assert {m.operator for m in mutate.choose(seed=3, count=200)} >= {"comparison", "sign", "constant", "bound"}


def test_apply_refuses_a_source_that_changed():
    mutation = mutate.mutations("x.c", SOURCE)[0]
    with pytest.raises(ValueError, match="does not have"):
        mutation.apply(SOURCE.replace("int s = 0", "int s = 9"))


def test_a_mutated_source_is_restored_byte_for_byte(tmp_path):
    # CRLF line ends (upstream's sources have them) and a byte that is not UTF-8: a restore through text would
    # change both, and the rebuilt objects would no longer match the library's coverage notes.
    stored = SOURCE.replace("\n", "\r\n").encode() + b"/* \xff */\r\n"
    path = tmp_path / "kernel.c"
    path.write_bytes(stored)
    candidates = mutate.mutations("kernel.c", mutate.read_source(path))
    assert [m.line for m in candidates] == [m.line for m in mutate.mutations("kernel.c", SOURCE)]
    mutation = candidates[0]
    with mutate.mutated(path, mutation):
        during = path.read_bytes()
        assert during != stored and during.count(b"\r\n") == stored.count(b"\r\n") and b"\xff" in during
    assert path.read_bytes() == stored
    with pytest.raises(RuntimeError), mutate.mutated(path, mutation):
        raise RuntimeError("the build failed")
    assert path.read_bytes() == stored


def test_every_kernel_source_maps_to_functions_the_suite_knows():
    from simdbind.conformance.runner import REGISTRY

    sources = mutate.kernel_sources()
    assert any(p.name == "pool_kernel.h" for p in sources) and any(p.name == "gemm.dispatch.c" for p in sources)
    assert not any("internal" in p.parts for p in sources)
    for path in sources:
        names = mutate.functions_of(path.relative_to(mutate.ROOT).as_posix())
        assert names and set(names) <= set(REGISTRY), path


@pytest.mark.skipif(os.environ.get("SIMDBIND_MUTATE") != "1",
                    reason="builds the bundled library twice (minutes); set SIMDBIND_MUTATE=1 to run")
def test_a_mutant_of_shuffle_is_killed_and_a_discarded_one_is_not_counted(tmp_path):
    path = "csrc/elementwise/shuffle.dispatch.c"
    candidates = mutate.mutations(path, (mutate.ROOT / path).read_text())
    sign = next(m for m in candidates if m.operator == "sign")
    broken = mutate.Mutation(path, sign.line, sign.column, sign.offset, sign.original, "+ +;", "syntax")
    outcomes = mutate.run([sign, broken], tmp_path / "work", timeout=600, echo=lambda line: None)
    assert [o.result for o in outcomes] == ["killed", "discarded"]
    assert mutate.score(outcomes) == (1, 0)


def test_every_upstream_file_the_coverage_rule_counts_maps_to_functions_of_the_suite():
    import mutate_upstream

    from simdbind.conformance import coverage
    from simdbind.conformance.registry import REGISTRY

    components = ["Synet", "SynetConvolution32fNhwcDirect", "SynetInnerProduct32f", "SynetInnerProduct8i",
                  "SynetPoolingMax32f", "SynetSoftmax32f", "SynetSoftmax16b", "SynetUnaryOperation",
                  "SynetGatherElements", "Gemm32fNN", "Gemm32f", "Winograd1", "SynetActivation", "SynetAdd", "BFloat16"]
    for isa in ("Base", "Sse41", "Avx2", "Avx512bw"):
        for component in components:
            name = f"Simd{isa}{component}.cpp"
            assert coverage.unit_of("upstream", name).in_scope, name
            functions = mutate_upstream.functions_of(name)
            assert functions and set(functions) <= set(REGISTRY), (name, functions)
    assert mutate_upstream.functions_of("SimdAvx512bwSynetConvolution32fNhwcDirect.cpp") == ["convolution32f"]
    assert mutate_upstream.functions_of("SimdSse41Synet.cpp") == ["eltwise", "lrn", "shuffle", "inner_product_layer"]
    with pytest.raises(KeyError):
        mutate_upstream.functions_of("SimdAvx2ResizeBilinear.cpp")
