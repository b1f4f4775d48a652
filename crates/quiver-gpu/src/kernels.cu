// Quiver's device kernels: graph-index lookups, exploration steps over columns of ids,
// prefix sums and batched key/value lookups.
//
// One source, two compilers: NVRTC builds it for the GPU at run time; a host C++ compiler
// builds it with QV_HOST for the tests, which run the same orchestration without a GPU.
// Every kernel is therefore a loop over independent indexes (QV_FOR: a grid-stride loop on
// the GPU, a plain loop on the host) with no shared memory, barriers, atomics or warp
// intrinsics, so the host build computes exactly what the device does.
//
// Kernels take one parameter, a block of 64-bit slots (pointers and integers), so that
// both builds launch every kernel the same way.

#ifdef QV_HOST
typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned char u8;
#define QV_KERNEL extern "C" void
#define QV_DEVICE static inline
#define QV_FOR(i, n) for (u64 i = 0; i < (u64)(n); ++i)
#else
typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned char u8;
#define QV_KERNEL extern "C" __global__ void
#define QV_DEVICE __device__ static inline
#define QV_FOR(i, n)                                                           \
  for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < (u64)(n);       \
       i += (u64)gridDim.x * blockDim.x)
#endif

#if QV_ID_BITS == 64
typedef u64 Id;
#else
typedef u32 Id;
#endif

#define QV_SLOTS 24
struct Params {
  u64 a[QV_SLOTS];
};

#define PTR(type, name, slot) type *name = (type *)p.a[slot]
#define VAL(type, name, slot) type name = (type)p.a[slot]

// Where the kernels find neighbour lists, in one of two layouts (four slots):
// - a whole direction of the graph index (see quiver-store's adjacency.rs): vertex v owns
//   words[offsets[v]..offsets[v + 1]] = [k, p_1, end_1, ..., p_k, end_k, neighbours of
//   p_1 ..., neighbours of p_k ...], predicates ascending; `keys` is null;
// - one predicate's segment in one direction (Wukong+G's predicate-based cache): the
//   vertices having such edges in `keys` (sorted, `vertices` of them), key i's neighbours
//   at words[offsets[i]..offsets[i + 1]].
struct Adjacency {
  const u64 *offsets;
  u64 vertices;
  const Id *words;
  const Id *keys;
};

QV_DEVICE Adjacency adjacency_at(const Params &p, int slot) {
  Adjacency a;
  a.offsets = (const u64 *)p.a[slot];
  a.vertices = p.a[slot + 1];
  a.words = (const Id *)p.a[slot + 2];
  a.keys = (const Id *)p.a[slot + 3];
  return a;
}

// The neighbours of `v` over `predicate`: their first word in `words` and their number (0
// when none, also for an unbound or unknown vertex).
QV_DEVICE void lookup(Adjacency a, u64 v, u64 predicate, u64 *start, u64 *len) {
  *start = 0;
  *len = 0;
  if (a.keys) {
    u64 lo = 0, hi = a.vertices;
    while (lo < hi) {
      u64 mid = (lo + hi) / 2;
      u64 key = a.keys[mid];
      if (key == v) {
        *start = a.offsets[mid];
        *len = a.offsets[mid + 1] - a.offsets[mid];
        return;
      }
      if (key < v)
        lo = mid + 1;
      else
        hi = mid;
    }
    return;
  }
  if (v >= a.vertices)
    return;
  u64 s = a.offsets[v], e = a.offsets[v + 1];
  if (s == e)
    return;
  u64 k = a.words[s];
  u64 lo = 0, hi = k;
  while (lo < hi) {
    u64 mid = (lo + hi) / 2;
    u64 q = a.words[s + 1 + 2 * mid];
    if (q == predicate) {
      u64 from = mid == 0 ? 0 : (u64)a.words[s + 2 * mid];
      u64 to = a.words[s + 2 + 2 * mid];
      *start = s + 1 + 2 * k + from;
      *len = to - from;
      return;
    }
    if (q < predicate)
      lo = mid + 1;
    else
      hi = mid;
  }
}

// The first place in the sorted list whose id is at least x (`past` 0), or more than x
// (`past` 1); len when there is none.
QV_DEVICE u64 bound(const Id *list, u64 len, Id x, int past) {
  u64 lo = 0, hi = len;
  while (lo < hi) {
    u64 mid = (lo + hi) / 2;
    Id y = list[mid];
    if (y < x || (past && y == x))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// Whether the sorted list holds x.
QV_DEVICE int contains(const Id *list, u64 len, Id x) {
  u64 i = bound(list, len, x, 0);
  return i < len && list[i] == x;
}

// Trims two sorted lists (their first words and lengths) each to the range of ids the
// other spans; both lengths 0 when the ranges do not meet. A department's members lie in a
// narrow range of ids (their IRIs share a prefix) while a university's alumni spread over
// all: trimmed, the candidates are the few alumni in range, not every member (the CPU's
// `overlap` in quiver-sparql's intersect.rs).
QV_DEVICE void trim_to_overlap(const Id *wa, u64 *sa, u64 *la, const Id *wb, u64 *sb,
                               u64 *lb) {
  if (*la != 0 && *lb != 0) {
    const Id *a = wa + *sa, *b = wb + *sb;
    Id lo = a[0] > b[0] ? a[0] : b[0];
    Id hi = a[*la - 1] < b[*lb - 1] ? a[*la - 1] : b[*lb - 1];
    if (lo <= hi) {
      u64 fa = bound(a, *la, lo, 0), ea = bound(a, *la, hi, 1);
      u64 fb = bound(b, *lb, lo, 0), eb = bound(b, *lb, hi, 1);
      *sa += fa;
      *la = ea - fa;
      *sb += fb;
      *lb = eb - fb;
    } else {
      *la = 0;
    }
  }
  if (*la == 0 || *lb == 0) {
    *la = 0;
    *lb = 0;
  }
}

// The row that owns output j: the last r in 0..n with pos[r] <= j (pos ascending, pos[n]
// the total, which exceeds j).
QV_DEVICE u64 owner(const u64 *pos, u64 n, u64 j) {
  u64 lo = 0, hi = n;
  while (lo < hi) {
    u64 mid = (lo + hi + 1) / 2;
    if (pos[mid] <= j)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

// The value of a step's end in row i: a column, or a constant when the column is null.
QV_DEVICE u64 end_value(const Id *column, u64 constant, u64 i) {
  return column ? (u64)column[i] : constant;
}

// Expand, stage one: per row, where its neighbour list starts and how long it is.
// 0 source column | 1 source constant | 2 rows | 3..6 adjacency | 7 predicate
// 8 starts (u64, rows) | 9 counts (u64, rows + 1; the last set to 0)
QV_KERNEL qv_expand_lookup(Params p) {
  PTR(const Id, source, 0);
  VAL(u64, constant, 1);
  VAL(u64, n, 2);
  Adjacency a = adjacency_at(p, 3);
  VAL(u64, predicate, 7);
  PTR(u64, starts, 8);
  PTR(u64, counts, 9);
  QV_FOR(i, n + 1) {
    if (i == n) {
      counts[n] = 0;
      continue;
    }
    u64 start, len;
    lookup(a, end_value(source, constant, i), predicate, &start, &len);
    starts[i] = start;
    counts[i] = len;
  }
}

// Expand, stage two: output j is neighbour (j - pos[row]) of its row (pos: the prefix
// sums of stage one's counts).
// 0 pos (u64, rows + 1) | 1 rows | 2 starts | 3 words | 4 total
// 5 selection (u32, total) | 6 column (Id, total)
QV_KERNEL qv_expand_emit(Params p) {
  PTR(const u64, pos, 0);
  VAL(u64, n, 1);
  PTR(const u64, starts, 2);
  PTR(const Id, words, 3);
  VAL(u64, total, 4);
  PTR(u32, selection, 5);
  PTR(Id, column, 6);
  QV_FOR(j, total) {
    u64 row = owner(pos, n, j);
    selection[j] = (u32)row;
    column[j] = words[starts[row] + (j - pos[row])];
  }
}

// Check: per row, 1 when the target is among the source's neighbours.
// 0 source column | 1 source constant | 2 rows | 3..6 adjacency | 7 predicate
// 8 target column | 9 target constant | 10 unbound id | 11 flags (u64, rows + 1)
QV_KERNEL qv_check(Params p) {
  PTR(const Id, source, 0);
  VAL(u64, constant, 1);
  VAL(u64, n, 2);
  Adjacency a = adjacency_at(p, 3);
  VAL(u64, predicate, 7);
  PTR(const Id, target, 8);
  VAL(u64, target_constant, 9);
  VAL(u64, unbound, 10);
  PTR(u64, flags, 11);
  QV_FOR(i, n + 1) {
    if (i == n) {
      flags[n] = 0;
      continue;
    }
    u64 t = end_value(target, target_constant, i);
    u64 start, len;
    lookup(a, end_value(source, constant, i), predicate, &start, &len);
    flags[i] = (t != unbound && len > 0 && contains(a.words + start, len, (Id)t)) ? 1 : 0;
  }
}

// Keeps the flagged rows, given the exclusive prefix sums of their 0/1 flags (row i was
// flagged when pos[i + 1] > pos[i]): selection[pos[i]] = i.
// 0 pos (u64, rows + 1) | 1 rows | 2 selection (u32)
QV_KERNEL qv_compact(Params p) {
  PTR(const u64, pos, 0);
  VAL(u64, n, 1);
  PTR(u32, selection, 2);
  QV_FOR(i, n) {
    if (pos[i + 1] != pos[i])
      selection[pos[i]] = (u32)i;
  }
}

// out[j] = column[selection[j]].
// 0 column | 1 selection (u32) | 2 rows out | 3 out
QV_KERNEL qv_gather(Params p) {
  PTR(const Id, column, 0);
  PTR(const u32, selection, 1);
  VAL(u64, m, 2);
  PTR(Id, out, 3);
  QV_FOR(j, m) { out[j] = column[selection[j]]; }
}

// Intersect, stage one: per row, the two lists (the step's and its partner's), each
// trimmed to the other's range; the shorter one gives the candidates, each looked up in
// the longer.
// 0 source A | 1 constant A | 2 source B | 3 constant B | 4 rows
// 5..8 adjacency A | 9 predicate A | 10..13 adjacency B | 14 predicate B
// 15 info (u64, 4 per row: small start, large start, large length, small is A)
// 16 counts (u64, rows + 1)
QV_KERNEL qv_intersect_lookup(Params p) {
  PTR(const Id, source_a, 0);
  VAL(u64, constant_a, 1);
  PTR(const Id, source_b, 2);
  VAL(u64, constant_b, 3);
  VAL(u64, n, 4);
  Adjacency a = adjacency_at(p, 5);
  VAL(u64, pa, 9);
  Adjacency b = adjacency_at(p, 10);
  VAL(u64, pb, 14);
  PTR(u64, info, 15);
  PTR(u64, counts, 16);
  QV_FOR(i, n + 1) {
    if (i == n) {
      counts[n] = 0;
      continue;
    }
    u64 sa, la, sb, lb;
    lookup(a, end_value(source_a, constant_a, i), pa, &sa, &la);
    lookup(b, end_value(source_b, constant_b, i), pb, &sb, &lb);
    trim_to_overlap(a.words, &sa, &la, b.words, &sb, &lb);
    int small_is_a = la <= lb;
    info[4 * i] = small_is_a ? sa : sb;
    info[4 * i + 1] = small_is_a ? sb : sa;
    info[4 * i + 2] = small_is_a ? lb : la;
    info[4 * i + 3] = small_is_a;
    counts[i] = small_is_a ? la : lb;
  }
}

// Intersect, stage two: candidate j (an element of its row's shorter list) is kept when
// the longer list holds it.
// 0 pos | 1 rows | 2 info | 3 words A | 4 words B | 5 candidates
// 6 candidate rows (u32) | 7 candidate values (Id) | 8 flags (u64, candidates + 1)
QV_KERNEL qv_intersect_candidates(Params p) {
  PTR(const u64, pos, 0);
  VAL(u64, n, 1);
  PTR(const u64, info, 2);
  PTR(const Id, words_a, 3);
  PTR(const Id, words_b, 4);
  VAL(u64, total, 5);
  PTR(u32, rows, 6);
  PTR(Id, values, 7);
  PTR(u64, flags, 8);
  QV_FOR(j, total + 1) {
    if (j == total) {
      flags[total] = 0;
      continue;
    }
    u64 row = owner(pos, n, j);
    const u64 *r = info + 4 * row;
    const Id *small = r[3] ? words_a : words_b;
    const Id *large = r[3] ? words_b : words_a;
    Id x = small[r[0] + (j - pos[row])];
    rows[j] = (u32)row;
    values[j] = x;
    flags[j] = contains(large + r[1], r[2], x) ? 1 : 0;
  }
}

// Keeps the flagged candidates (prefix sums of flags, as for qv_compact): their rows
// and values.
// 0 pos (u64, candidates + 1) | 1 candidates | 2 candidate rows | 3 candidate values
// 4 selection (u32) | 5 column (Id)
QV_KERNEL qv_compact_pairs(Params p) {
  PTR(const u64, pos, 0);
  VAL(u64, n, 1);
  PTR(const u32, rows, 2);
  PTR(const Id, values, 3);
  PTR(u32, selection, 4);
  PTR(Id, column, 5);
  QV_FOR(i, n) {
    if (pos[i + 1] != pos[i]) {
      selection[pos[i]] = rows[i];
      column[pos[i]] = values[i];
    }
  }
}

// Prefix sums, stage one: thread t owns chunk t of `chunk` elements, writes its exclusive
// prefix sums in place and its total to sums[t].
// 0 values (u64, in place) | 1 length | 2 sums | 3 chunk
QV_KERNEL qv_scan_chunks(Params p) {
  PTR(u64, values, 0);
  VAL(u64, n, 1);
  PTR(u64, sums, 2);
  VAL(u64, chunk, 3);
  QV_FOR(t, (n + chunk - 1) / chunk) {
    u64 from = t * chunk, to = from + chunk < n ? from + chunk : n;
    u64 acc = 0;
    for (u64 j = from; j < to; ++j) {
      u64 x = values[j];
      values[j] = acc;
      acc += x;
    }
    sums[t] = acc;
  }
}

// Prefix sums, stage two: adds each chunk's offset (the scanned sums).
// 0 values | 1 length | 2 scanned sums | 3 chunk
QV_KERNEL qv_scan_add(Params p) {
  PTR(u64, values, 0);
  VAL(u64, n, 1);
  PTR(const u64, sums, 2);
  VAL(u64, chunk, 3);
  QV_FOR(i, n) { values[i] += sums[i / chunk]; }
}

// Batched key/value lookups (Mega-KV's GET): a key packs vertex << 32 | predicate << 1 |
// direction (1: IN); the value's digest is its length rotated left by 40 bits XOR its
// first neighbour, as the CPU engines compute it; found[i] is 0 for a key without a list.
// 0 keys (u64) | 1 count | 2..5 adjacency OUT | 6..9 adjacency IN (whole directions)
// 10 digests (u64) | 11 found (u8)
QV_KERNEL qv_kv_lookup(Params p) {
  PTR(const u64, keys, 0);
  VAL(u64, n, 1);
  Adjacency out = adjacency_at(p, 2);
  Adjacency in = adjacency_at(p, 6);
  PTR(u64, digests, 10);
  PTR(u8, found, 11);
  QV_FOR(i, n) {
    u64 key = keys[i];
    u64 start, len;
    lookup((key & 1) ? in : out, key >> 32, (key >> 1) & 0x7FFFFFFFull, &start, &len);
    const Id *words = (key & 1) ? in.words : out.words;
    u64 first = len ? (u64)words[start] : 0;
    digests[i] = ((len << 40) | (len >> 24)) ^ first;
    found[i] = len ? 1 : 0;
  }
}
