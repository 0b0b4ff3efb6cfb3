"""Go's `sort.Slice`, comparison for comparison, for orders whose ties upstream leaves to it.

`sort.Slice` is not stable: it is pattern-defeating quicksort (pdqsort), which insertion-sorts
runs of up to 12 elements and partitions longer ones. Where upstream sorts with it, elements
that compare equal end up in an order fixed by the exact sequence of comparisons and swaps the
algorithm makes, and so does every element when the comparison is not a strict weak order
(upstream's MoreImportantPod calls a pod that has not started "more important" than another
such pod whichever way it is asked). Any other sort, stable or not, disagrees on those.

pdqsort is deterministic (its one source of scrambling is seeded by the length), so repeating
each step yields the same order. The steps below follow the sort package's pdqsort (Go's since
go1.19; tests compare them with orders recorded from go1.26): the same pivot choice, partition
loops, fallbacks and thresholds, because any change in which pairs are compared or swapped
changes the result.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from typing import Generic
from typing import TypeVar

T = TypeVar("T")

# Runs this short are insertion-sorted.
_INSERTION_MAX = 12
# From this length the pivot is a median of three medians of three (Tukey's ninther).
_NINTHER_MIN = 50
# Nearly sorted runs shorter than this are not repaired in place by a few shifts.
_SHIFTING_MIN = 50
# How many out-of-order neighbours a nearly sorted run may have before it is partitioned.
_SHIFT_STEPS = 5
# All twelve comparisons of the ninther out of order: the run looks descending.
_ALL_SWAPPED = 12
_MASK64 = (1 << 64) - 1


def go_sort_slice(items: Iterable[T], less: Callable[[T, T], bool]) -> list[T]:
    """A new list of `items` in the order Go's `sort.Slice` leaves them with `less`."""
    data = list(items)
    _Pdqsort(data, less).run()
    return data


class _Pdqsort(Generic[T]):
    """One sort of `data` in place. Indices are absolute positions in `data`, as in Go, where
    a sub-run knows that the element just before it is a pivot no greater than any of its own.
    """

    def __init__(self, data: list[T], less: Callable[[T, T], bool]) -> None:
        self.data = data
        self._less = less

    def less(self, i: int, j: int) -> bool:
        return self._less(self.data[i], self.data[j])

    def swap(self, i: int, j: int) -> None:
        data = self.data
        data[i], data[j] = data[j], data[i]

    def run(self) -> None:
        n = len(self.data)
        # The number of badly unbalanced partitions allowed before falling back to heapsort:
        # bits.Len(n) in Go, which is int.bit_length.
        self.sort(0, n, n.bit_length())

    def sort(self, a: int, b: int, bad_pivots_left: int) -> None:
        """Sort data[a:b]: recurse into the smaller side of each partition, loop on the
        larger, so the stack stays logarithmic."""
        balanced = partitioned = True
        while True:
            length = b - a
            if length <= _INSERTION_MAX:
                self.insertion_sort(a, b)
                return
            if bad_pivots_left == 0:
                self.heap_sort(a, b)
                return
            if not balanced:
                self.scramble(a, b)
                bad_pivots_left -= 1
            pivot, ascending, descending = self.choose_pivot(a, b)
            if descending:
                # A run that looks descending is reversed first; the pivot moves with it.
                self.reverse(a, b)
                pivot = (b - 1) - (pivot - a)
                ascending = True
            if balanced and partitioned and ascending and self.nearly_sorted(a, b):
                return
            if a > 0 and not self.less(a - 1, pivot):
                # The pivot equals the previous partition's pivot, which no element here is
                # below: split off the elements equal to it and go on with the greater ones.
                a = self.partition_equal(a, b, pivot)
                continue
            mid, partitioned = self.partition(a, b, pivot)
            left, right = mid - a, b - mid
            threshold = length // 8
            if left < right:
                balanced = left >= threshold
                self.sort(a, mid, bad_pivots_left)
                a = mid + 1
            else:
                balanced = right >= threshold
                self.sort(mid + 1, b, bad_pivots_left)
                b = mid

    def insertion_sort(self, a: int, b: int) -> None:
        for i in range(a + 1, b):
            j = i
            while j > a and self.less(j, j - 1):
                self.swap(j, j - 1)
                j -= 1

    def heap_sort(self, a: int, b: int) -> None:
        size = b - a
        for root in range((size - 1) // 2, -1, -1):
            self.sift_down(a, root, size)
        for end in range(size - 1, -1, -1):
            self.swap(a, a + end)
            self.sift_down(a, 0, end)

    def sift_down(self, first: int, root: int, size: int) -> None:
        """Restore the max-heap below `root` in the heap of `size` elements at data[first:]."""
        while True:
            child = 2 * root + 1
            if child >= size:
                return
            if child + 1 < size and self.less(first + child, first + child + 1):
                child += 1
            if not self.less(first + root, first + child):
                return
            self.swap(first + root, first + child)
            root = child

    def scramble(self, a: int, b: int) -> None:
        """After an unbalanced partition, swap three middle elements with pseudo-random ones
        (xorshift64 seeded with the length) to break a pattern that defeats the pivot."""
        length = b - a
        if length < 8:
            return
        state = length
        modulus = 1 << length.bit_length()
        middle = a + (length // 4) * 2
        for index in range(middle - 1, middle + 2):
            state ^= (state << 13) & _MASK64
            state ^= state >> 7
            state ^= (state << 17) & _MASK64
            other = state & (modulus - 1)
            if other >= length:
                other -= length
            self.swap(index, a + other)

    def choose_pivot(self, a: int, b: int) -> tuple[int, bool, bool]:
        """The pivot's index, and whether the run looked ascending (no comparison found a pair
        out of order) or descending (every one did)."""
        length = b - a
        quarter = length // 4
        i, j, k = a + quarter, a + 2 * quarter, a + 3 * quarter
        swaps = 0
        if length >= 8:
            if length >= _NINTHER_MIN:
                i, swapped_i = self.median(i - 1, i, i + 1)
                j, swapped_j = self.median(j - 1, j, j + 1)
                k, swapped_k = self.median(k - 1, k, k + 1)
                swaps += swapped_i + swapped_j + swapped_k
            j, swapped = self.median(i, j, k)
            swaps += swapped
        return j, swaps == 0, swaps == _ALL_SWAPPED

    def median(self, a: int, b: int, c: int) -> tuple[int, int]:
        """The index of the median of three, by three ordered comparisons (the count of
        pairs found out of order tells choose_pivot how sorted the run looks)."""
        swaps = 0
        if self.less(b, a):
            a, b = b, a
            swaps += 1
        if self.less(c, b):
            b, c = c, b
            swaps += 1
        if self.less(b, a):
            a, b = b, a
            swaps += 1
        return b, swaps

    def reverse(self, a: int, b: int) -> None:
        i, j = a, b - 1
        while i < j:
            self.swap(i, j)
            i += 1
            j -= 1

    def nearly_sorted(self, a: int, b: int) -> bool:
        """Whether data[a:b] is sorted, after repairing at most a few out-of-order neighbours
        in runs long enough to be worth it; a run left unsorted is partitioned as usual."""
        i = a + 1
        for _ in range(_SHIFT_STEPS):
            while i < b and not self.less(i, i - 1):
                i += 1
            if i == b:
                return True
            if b - a < _SHIFTING_MIN:
                return False
            self.swap(i, i - 1)
            if i - a >= 2:
                # Go's loop runs down to index 1, not to a + 1: it may step below the run.
                for j in range(i - 1, 0, -1):
                    if not self.less(j, j - 1):
                        break
                    self.swap(j, j - 1)
            if b - i >= 2:
                for j in range(i + 1, b):
                    if not self.less(j, j - 1):
                        break
                    self.swap(j, j - 1)
        return False

    def partition(self, a: int, b: int, pivot: int) -> tuple[int, bool]:
        """Move the pivot to data[a], put the elements less than it before the others, and
        place it between them: its final index, and whether nothing had to move."""
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        first_pass = True
        while True:
            while i <= j and self.less(i, a):
                i += 1
            while i <= j and not self.less(j, a):
                j -= 1
            if i > j:
                break
            first_pass = False
            self.swap(i, j)
            i += 1
            j -= 1
        self.swap(j, a)
        return j, first_pass

    def partition_equal(self, a: int, b: int, pivot: int) -> int:
        """With no element of data[a:b] less than the pivot, put the ones equal to it first;
        returns where the greater ones start."""
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while True:
            while i <= j and not self.less(a, i):
                i += 1
            while i <= j and self.less(a, j):
                j -= 1
            if i > j:
                return i
            self.swap(i, j)
            i += 1
            j -= 1
