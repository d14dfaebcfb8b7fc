/* Text columns of many rows and few distinct values: the bytes of table[code[i]] for each row,
   into arrays the caller allocated (an arrow large_string's offsets and data). */
#include <string.h>

#include "common.h"

/* out_off[0..n] (out_off[0] = 0) and out_data (of out_off[n] bytes) of the strings
   table[code[i]]: table string j is t_data[t_off[j], t_off[j + 1]).  With out_data NULL only
   the offsets are written.  Returns the byte count, -2 for a code outside [0, n_table), or
   ERR_CANCELLED. */
EXPORT int64_t tfp_take_text(const int64_t *t_off, const uint8_t *t_data, int64_t n_table,
                             const int64_t *code, int64_t n, int64_t *out_off,
                             uint8_t *out_data) {
    int64_t at = 0;
    out_off[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        if (CANCEL_POLL(i)) return ERR_CANCELLED;
        int64_t c = code[i];
        if (c < 0 || c >= n_table) return -2;
        int64_t len = t_off[c + 1] - t_off[c];
        if (out_data && len > 0) memcpy(out_data + at, t_data + t_off[c], (size_t)len);
        at += len;
        out_off[i + 1] = at;
    }
    return at;
}
