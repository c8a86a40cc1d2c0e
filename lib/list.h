/*
 * Intrusive doubly linked circular list. A list head is a ucoll_list_t whose
 * next/prev point to itself when empty; elements embed a ucoll_list_t and
 * are recovered with ucoll_container_of(). No allocation ever happens here.
 */
#ifndef UCOLL_LIST_H
#define UCOLL_LIST_H

#include <stddef.h>

typedef struct ucoll_list {
    struct ucoll_list *next, *prev;
} ucoll_list_t;

#define ucoll_container_of(_ptr, _type, _member) \
    ((_type *)((char *)(_ptr)-offsetof(_type, _member)))

static inline void ucoll_list_init(ucoll_list_t *h)
{
    h->next = h->prev = h;
}
static inline int ucoll_list_empty(const ucoll_list_t *h)
{
    return h->next == h;
}

static inline void ucoll_list_insert_between(ucoll_list_t *e, ucoll_list_t *a, ucoll_list_t *b)
{
    e->prev = a;
    e->next = b;
    a->next = e;
    b->prev = e;
}

/* Append at the tail (FIFO order with ucoll_list_head). */
static inline void ucoll_list_add_tail(ucoll_list_t *h, ucoll_list_t *e)
{
    ucoll_list_insert_between(e, h->prev, h);
}

static inline void ucoll_list_add_head(ucoll_list_t *h, ucoll_list_t *e)
{
    ucoll_list_insert_between(e, h, h->next);
}

static inline void ucoll_list_del(ucoll_list_t *e)
{
    e->prev->next = e->next;
    e->next->prev = e->prev;
    e->next = e->prev = e;
}

#define ucoll_list_first(_h, _type, _member) ucoll_container_of((_h)->next, _type, _member)

/* Iterate; safe against removal of the current element. */
#define ucoll_list_for_each_safe(_pos, _tmp, _h)                     \
    for ((_pos) = (_h)->next, (_tmp) = (_pos)->next; (_pos) != (_h); \
         (_pos) = (_tmp), (_tmp) = (_pos)->next)

#define ucoll_list_for_each(_pos, _h) \
    for ((_pos) = (_h)->next; (_pos) != (_h); (_pos) = (_pos)->next)

#endif
