/* traces/pbwire.c - protobuf wire-format reader (see pbwire.h). Cost: one
 * pass over the bytes; nothing is allocated. */
#include "traces/pbwire.h"

#include <string.h>

pbwire_reader pbwire_sub(const pbwire_field *f)
{
    pbwire_reader r = {f->data, f->len, 0, f->data_offset};
    return r;
}

int pbwire_varint(pbwire_reader *r, uint64_t *v)
{
    uint64_t x = 0;
    size_t p = r->pos;
    for (int shift = 0; shift < 70; shift += 7) {
        if (p >= r->len)
            return PBWIRE_ETRUNC;
        uint8_t b = r->p[p++];
        if (shift == 63 && b > 1)
            return PBWIRE_EVARINT;
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            r->pos = p;
            *v = x;
            return PBWIRE_OK;
        }
    }
    return PBWIRE_EVARINT;
}

static int fixed(pbwire_reader *r, size_t n, uint64_t *v)
{
    if (r->len - r->pos < n)
        return PBWIRE_ETRUNC;
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++)
        x |= (uint64_t)r->p[r->pos + i] << (8 * i);
    r->pos += n;
    *v = x;
    return PBWIRE_OK;
}

int pbwire_next(pbwire_reader *r, pbwire_field *f)
{
    if (r->pos >= r->len)
        return PBWIRE_END;
    size_t start = r->pos;
    uint64_t tag, n;
    int rc = pbwire_varint(r, &tag);
    memset(f, 0, sizeof *f);
    f->offset = r->base + start;
    f->field = (uint32_t)(tag >> 3);
    f->wire = (int)(tag & 7);
    switch (f->wire) {
    case PB_VARINT:
        if (rc == PBWIRE_OK)
            rc = pbwire_varint(r, &f->v);
        break;
    case PB_I64:
        if (rc == PBWIRE_OK)
            rc = fixed(r, 8, &f->v);
        break;
    case PB_I32:
        if (rc == PBWIRE_OK)
            rc = fixed(r, 4, &f->v);
        break;
    case PB_LEN:
        if (rc == PBWIRE_OK)
            rc = pbwire_varint(r, &n);
        if (rc == PBWIRE_OK && n > r->len - r->pos)
            rc = PBWIRE_ETRUNC;
        if (rc == PBWIRE_OK) {
            f->data = r->p + r->pos;
            f->data_offset = r->base + r->pos;
            f->len = (size_t)n;
            r->pos += (size_t)n;
        }
        break;
    default:
        if (rc == PBWIRE_OK)
            rc = PBWIRE_EWIRE;
    }
    if (rc != PBWIRE_OK)
        r->pos = start;
    return rc;
}

int pbwire_varints(const pbwire_field *f, void (*fn)(uint64_t v, void *ctx), void *ctx)
{
    if (f->wire == PB_VARINT) {
        fn(f->v, ctx);
        return PBWIRE_OK;
    }
    if (f->wire != PB_LEN)
        return PBWIRE_EWIRE;
    pbwire_reader r = {f->data, f->len, 0, 0};
    while (r.pos < r.len) {
        uint64_t v;
        int rc = pbwire_varint(&r, &v);
        if (rc != PBWIRE_OK)
            return rc;
        fn(v, ctx);
    }
    return PBWIRE_OK;
}

const char *pbwire_strerror(int code)
{
    switch (code) {
    case PBWIRE_OK:
        return "ok";
    case PBWIRE_END:
        return "end of message";
    case PBWIRE_ETRUNC:
        return "truncated (input ends inside a varint or field)";
    case PBWIRE_EVARINT:
        return "varint longer than 10 bytes";
    case PBWIRE_EWIRE:
        return "unsupported wire type";
    }
    return "unknown error";
}
