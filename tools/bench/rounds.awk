# awk functions for the benchmark scripts' tables (train_vs_torch.sh, contention.sh), prepended to their
# programs: a list is the space-separated measurements of one cell, one per round.
#   median(list)  the median
#   cell(list)    "median (min-max)", rounded to whole numbers; "-" for an empty list
function median(list,   n, v, i, j, t) {
  n = split(list, v, " ")
  for (i = 1; i <= n; ++i) for (j = i + 1; j <= n; ++j) if (v[j] + 0 < v[i] + 0) { t = v[i]; v[i] = v[j]; v[j] = t }
  return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
function cell(list,   n, v, i, lo, hi) {
  if (list == "") return "-"
  n = split(list, v, " "); lo = hi = v[1]
  for (i = 2; i <= n; ++i) { if (v[i] + 0 < lo + 0) lo = v[i]; if (v[i] + 0 > hi + 0) hi = v[i] }
  return sprintf("%.0f (%.0f-%.0f)", median(list), lo, hi)
}
