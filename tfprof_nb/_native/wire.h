/* Protobuf wire-format primitives of the XSpace walker: varints, tags, lengths, skipping.
   Every read is bounds-checked against the end of the enclosing message; errors are
   negative codes. */
#ifndef TFPROF_WIRE_H
#define TFPROF_WIRE_H

#include "common.h"

/* (the error codes ERR_* are in layout.h, generated from layout.py with their meanings;
   ERR_CHANGED: the walk found more or fewer events or stats than the framing pass counted,
   the bytes changed between the passes, a file rewritten while it is read) */

static inline int64_t varint_slow(const uint8_t *b, int64_t pos, int64_t end, uint64_t *out) {
    uint64_t r = 0;
    int shift = 0;
    while (pos < end && shift <= 63) {
        uint64_t c = b[pos++];
        r |= (c & 0x7F) << shift;
        if (c < 0x80) {
            *out = r;
            return pos;
        }
        shift += 7;
    }
    *out = 0;
    return pos >= end ? ERR_TRUNCATED_VARINT : ERR_VARINT_TOO_LONG;
}

/* the low 7 bits of each of the 8 bytes of ``w``, packed (56 bits) */
static inline uint64_t pack7(uint64_t x) {
    x &= 0x7F7F7F7F7F7F7F7FULL;
    x = ((x & 0x7F007F007F007F00ULL) >> 1) | (x & 0x007F007F007F007FULL);
    x = ((x & 0x3FFF00003FFF0000ULL) >> 2) | (x & 0x00003FFF00003FFFULL);
    return ((x & 0x0FFFFFFF00000000ULL) >> 4) | (x & 0x000000000FFFFFFFULL);
}

/* A varint at b[pos] inside a message ending at ``end``: the new position, or an error.
   With 10 bytes left in the message, it is read a word at a time. */
static inline int64_t varint(const uint8_t *b, int64_t pos, int64_t end, uint64_t *out) {
    if (pos < end && b[pos] < 0x80) {
        *out = b[pos];
        return pos + 1;
    }
    if (end - pos >= 10) {
        uint64_t w;
        memcpy(&w, b + pos, 8);
        uint64_t stops = ~w & 0x8080808080808080ULL;
        if (stops) {
            int nbytes = (__builtin_ctzll(stops) >> 3) + 1;
            *out = pack7(nbytes == 8 ? w : (w & ((1ULL << (8 * nbytes)) - 1)));
            return pos + nbytes;
        }
        uint64_t b8 = b[pos + 8], b9 = b[pos + 9];
        if (b8 < 0x80) {
            *out = pack7(w) | (b8 << 56);
            return pos + 9;
        }
        if (b9 < 0x80) { /* the tenth byte's bits above 64 are dropped */
            *out = pack7(w) | ((b8 & 0x7F) << 56) | (b9 << 63);
            return pos + 10;
        }
        *out = 0;
        return ERR_VARINT_TOO_LONG;
    }
    return varint_slow(b, pos, end, out);
}

/* the position after a varint (its value unused), or an error */
static inline int64_t skip_varint(const uint8_t *b, int64_t pos, int64_t end) {
    if (end - pos >= 8) {
        uint64_t w;
        memcpy(&w, b + pos, 8);
        uint64_t stops = ~w & 0x8080808080808080ULL;
        if (stops) return pos + (__builtin_ctzll(stops) >> 3) + 1;
    }
    uint64_t v;
    return varint_slow(b, pos, end, &v);
}

/* field tag: returns the new position or an error; field number and wire type via pointers */
static inline int64_t tag(const uint8_t *b, int64_t pos, int64_t end, int64_t *field, int *wt) {
    uint64_t key;
    if (pos < end && b[pos] < 0x80) {
        key = b[pos++];
    } else {
        pos = varint(b, pos, end, &key);
        if (pos < 0) return pos;
        if (key > 0xFFFFFFFFULL) return ERR_BAD_TAG;
    }
    *field = (int64_t)(key >> 3);
    *wt = (int)(key & 7);
    if (*field == 0) return ERR_FIELD_ZERO;
    return pos;
}

/* length prefix: returns the payload start; payload end via pointer */
static inline int64_t length(const uint8_t *b, int64_t pos, int64_t end, int64_t *stop) {
    uint64_t n;
    pos = varint(b, pos, end, &n);
    if (pos < 0) return pos;
    if (n > (uint64_t)(end - pos)) return ERR_LENGTH_OVERRUN;
    *stop = pos + (int64_t)n;
    return pos;
}

static inline int64_t skip(const uint8_t *b, int64_t pos, int64_t end, int wt) {
    int64_t stop;
    switch (wt) {
    case 0:
        return skip_varint(b, pos, end);
    case 1:
        return pos + 8 > end ? ERR_FIXED_OVERRUN : pos + 8;
    case 2:
        pos = length(b, pos, end, &stop);
        return pos < 0 ? pos : stop;
    case 5:
        return pos + 4 > end ? ERR_FIXED_OVERRUN : pos + 4;
    default:
        return ERR_BAD_WIRE_TYPE;
    }
}

#endif
