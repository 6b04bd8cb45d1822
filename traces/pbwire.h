/* traces/pbwire.h - a minimal protobuf wire-format reader: varints, the four
 * wire types and length-delimited sub-messages, walked field by field. Enough
 * to decode Chakra .et files without protobuf-c; no schema, no allocation.
 * Reference: protobuf.dev/programming-guides/encoding (varint = 7 bits per
 * byte, low group first, high bit = more; tag = field << 3 | wire type).
 */
#ifndef TRACES_PBWIRE_H
#define TRACES_PBWIRE_H

#include <stddef.h>
#include <stdint.h>

enum { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2, PB_I32 = 5 };

enum {
    PBWIRE_OK = 0,
    PBWIRE_END = 1,       /* pbwire_next: no more fields */
    PBWIRE_ETRUNC = -1,   /* input ends inside a varint or a field */
    PBWIRE_EVARINT = -2,  /* varint longer than 10 bytes */
    PBWIRE_EWIRE = -3,    /* unknown or unsupported wire type (groups: 3, 4) */
};

/* A view of bytes p[0..len); `base` is p's offset in the file, for messages. */
typedef struct {
    const uint8_t *p;
    size_t len;
    size_t pos;
    size_t base;
} pbwire_reader;

typedef struct {
    uint32_t field;
    int wire;
    uint64_t v;          /* PB_VARINT value, or the raw little-endian PB_I64/PB_I32 bits */
    const uint8_t *data; /* PB_LEN: the payload */
    size_t len;          /* PB_LEN: payload length */
    size_t offset;       /* file offset of the tag */
    size_t data_offset;  /* PB_LEN: file offset of the payload */
} pbwire_field;

/* A reader over a PB_LEN field's payload (offsets stay file offsets). */
pbwire_reader pbwire_sub(const pbwire_field *f);

/* Reads one varint at r->pos; PBWIRE_OK, PBWIRE_ETRUNC or PBWIRE_EVARINT
 * (r->pos is left at the start of the bad varint on failure). */
int pbwire_varint(pbwire_reader *r, uint64_t *v);

/* Next field of a message: PBWIRE_OK (filled *f), PBWIRE_END, or an error
 * code with r->pos at the offending tag. */
int pbwire_next(pbwire_reader *r, pbwire_field *f);

/* Packed or single repeated varints: calls fn(v, ctx) for each value of a
 * PB_VARINT field or each varint in a PB_LEN (packed) field. Returns
 * PBWIRE_OK or an error code. */
int pbwire_varints(const pbwire_field *f, void (*fn)(uint64_t v, void *ctx), void *ctx);

/* "truncated", "varint too long", ... for an error code. */
const char *pbwire_strerror(int code);

#endif
