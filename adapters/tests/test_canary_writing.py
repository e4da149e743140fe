"""Unit tests of how canary variants are written (adapters/canary_writing.py): a group's values
keep the real value's type, sign and length; a number's group is the same set whichever of its
members is real, and every two strings of a group differ at one place alike; a smaller k draws a
subset of a larger one's values (so a gold check's values hold every group a grading can draw);
every value renders to a literal that reads back as itself. Plans and verdicts:
tests/test_canaries.py."""
import ast
import os
import random
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from beyondswe_verifier import canaries as cm  # noqa: E402
from beyondswe_verifier import canary_writing as wm  # noqa: E402


class Values(unittest.TestCase):
    def test_values_keep_their_type_sign_and_length(self):
        rng = random.Random(5)
        for v in (0, 7, -2, 1000, 3.5, -0.25, "hello-world", b"abc", "A1"):
            for k in (1, 3, 9, 19):
                vals = wm.group_values(v, k, rng)
                self.assertTrue(2 <= len(vals) <= k + 1, (v, k, vals))
                self.assertEqual(len(set(vals)), len(vals))
                self.assertIn(v, vals)
                for x in vals:
                    self.assertIs(type(x), type(v))
                    if isinstance(v, (int, float)):
                        self.assertEqual(x >= 0, v >= 0, (v, vals))
                    else:
                        self.assertEqual(len(x), len(v))
                        if x != v:
                            self.assertNotEqual(x.lower(), v.lower())
        # A number always has the whole group, however near zero it is.
        for v in (0, 1, 3, -1, -2, 1000, 0.5, -0.25, 2.55):
            self.assertEqual(len(wm.group_values(v, 19, rng)), 20, v)
        self.assertIsNone(wm.group_values(2.50000001, 9, rng))

    def test_a_number_group_is_the_same_set_whichever_member_is_real(self):
        # The forger sees the set: if it were made otherwise for one member than for another
        # (its size set by how far the value is from zero, its end at zero), the set would name
        # the real value. Every member of a number's group has that very group.
        rng = random.Random(0)
        values = list(range(-45, 46)) + [x / 10.0 for x in range(-45, 46)] + [2.55, -0.25, 12.34, 9.99]
        for k in (1, 4, 9, 19):
            for v in values:
                group = wm.group_values(v, k, rng)
                self.assertEqual(len(group), k + 1, (v, k, group))
                for member in group:
                    self.assertEqual(sorted(wm.group_values(member, k, rng)), sorted(group),
                                     (v, member, k))
        # Strings: every two variants differ at the same one place, so no variant is the one
        # the others were made from (each at distance 1 from all the rest).
        for seed in range(50):
            vals = wm.group_values("hello-world", 9, random.Random(seed))
            for a in vals:
                for b in vals:
                    if a != b:
                        self.assertEqual(sum(x != y for x, y in zip(a, b)), 1, vals)

    def test_every_value_is_written_the_same_way(self):
        for v in ("caf\u00e9 \u2212 \"q\"\n", b"\xff\x00'", 3.25, -7):
            for q in ("'", '"'):
                self.assertEqual(ast.literal_eval(wm.render(v, q)), v)

    def test_a_smaller_k_draws_a_subset_of_a_larger_ones_values(self):
        for v in ["three items", b"abc9", 7, -12, 0.25, 3.5]:
            for seed in range(20):
                big = wm.group_values(v, cm.MAX_K, random.Random(seed))
                for k in (1, 2, 3, 4, 9):
                    small = wm.group_values(v, k, random.Random(seed))
                    checked = wm.check_values(v, [cm.MAX_K, k], lambda s=seed: random.Random(s))
                    self.assertTrue(set(small) <= set(checked) | {v}, (v, k, small))
                    if isinstance(v, (str, bytes)):
                        self.assertTrue(set(small) <= set(big), (v, k))

    def test_a_string_with_a_letter_changes_a_letter_and_reaches_twenty_values(self):
        for seed in range(40):
            vals = wm.group_values("v2", cm.MAX_K, random.Random(seed))
            self.assertEqual(len(vals), 20, vals)
            self.assertTrue(all(x[1] == "2" for x in vals), vals)
            # Only digits: ten at most, each a digit changed.
            self.assertEqual(len(wm.group_values("2024", cm.MAX_K, random.Random(seed))), 10)

    def test_string_values_from_another_seed_differ(self):
        lit = ast.parse("x == 'three items'").body[0].value.comparators[0]
        a = wm.group_values("three items", 9, cm.GoldCheck("one", {}).rng("t.py", (), "test_x", lit))
        b = wm.group_values("three items", 9, cm.GoldCheck("two", {}).rng("t.py", (), "test_x", lit))
        self.assertNotEqual(a, b)


if __name__ == "__main__":
    unittest.main()
