// Copies the visible nodes of a tree-sitter tree into a flat array (see syntax.rs), in one
// walk over tree-sitter's subtrees. tree-sitter's own cursor finds each next sibling by
// climbing and re-entering the hidden nodes around it, hundreds of instructions a step; this
// walk keeps its place in every open subtree instead. It reads tree-sitter's internal
// headers, tree-sitter 0.27.1's (Cargo.toml pins that version, build.rs checks it), and
// reproduces what the cursor reports: the test in syntax.rs compares the two on every node
// of the test kernels.
#include <stdlib.h>

#include "./language.h"
#include "./subtree.h"
#include "./tree.h"

// Must match `Entry` in syntax.rs.
typedef struct {
  uint32_t start;
  uint32_t end;
  uint32_t parent;
  uint32_t subtree_end;
  uint16_t kind;
  uint16_t field;
  uint8_t flags;
} BankwiseEntry;

enum { NAMED = 1, EXTRA = 2, MISSING = 4, HAS_ERROR = 8 };

// A subtree whose children are being visited.
typedef struct {
  const Subtree *children;
  uint32_t child_count;
  uint32_t child_index;
  uint32_t structural_index;
  // Start byte of the next child.
  uint32_t position;
  const TSSymbol *aliases;
  const TSFieldMapEntry *fields;
  const TSFieldMapEntry *fields_end;
  // Index of the nearest visible ancestor (the subtree itself when it is visible).
  uint32_t visible_parent;
  // The field a hidden subtree passes to its children that have none of their own.
  uint16_t inherited_field;
} Frame;

// What ts_node_symbol, ts_node_is_named, ... answer, without their calls. An alias is never
// an error symbol, which ts_language_symbol_metadata treats apart.
static inline TSSymbol public_symbol(const TSLanguage *language, TSSymbol symbol) {
  return symbol == ts_builtin_sym_error ? symbol : language->public_symbol_map[symbol];
}

static inline uint8_t flags_of(const TSLanguage *language, Subtree subtree, TSSymbol alias) {
  bool named = alias ? language->symbol_metadata[alias].named : ts_subtree_named(subtree);
  return (named ? NAMED : 0) | (ts_subtree_extra(subtree) ? EXTRA : 0) |
         (ts_subtree_missing(subtree) ? MISSING : 0) |
         (ts_subtree_error_cost(subtree) > 0 ? HAS_ERROR : 0);
}

static inline bool push(Frame **stack, uint32_t *size, uint32_t *capacity, Frame frame) {
  if (*size == *capacity) {
    uint32_t grown = *capacity ? *capacity * 2 : 64;
    Frame *moved = realloc(*stack, grown * sizeof(Frame));
    if (!moved) return false;
    *stack = moved;
    *capacity = grown;
  }
  (*stack)[(*size)++] = frame;
  return true;
}

static inline Frame frame_of(const TSLanguage *language, Subtree subtree, uint32_t position,
                      uint32_t visible_parent, uint16_t inherited_field) {
  Frame frame = {
    .children = ts_subtree_children(subtree),
    .child_count = ts_subtree_child_count(subtree),
    .position = position,
    .aliases = ts_language_alias_sequence(language, ts_subtree_production_id(subtree)),
    .visible_parent = visible_parent,
    .inherited_field = inherited_field,
  };
  ts_language_field_map(language, ts_subtree_production_id(subtree), &frame.fields,
                        &frame.fields_end);
  return frame;
}

// Writes the visible nodes under `root` (a tree's root node) to `out` in pre-order, with
// `subtree_end` left 0. Returns how many, or UINT32_MAX when `capacity` is too small or
// memory runs out.
uint32_t bankwise_flatten(TSNode root, BankwiseEntry *out, uint32_t capacity) {
  const TSLanguage *language = root.tree->language;
  Subtree top = *(const Subtree *)root.id;
  if (capacity == 0) return UINT32_MAX;
  out[0] = (BankwiseEntry){
    .start = ts_node_start_byte(root),
    .end = ts_node_start_byte(root) + ts_subtree_size(top).bytes,
    .parent = UINT32_MAX,
    .kind = public_symbol(language, ts_subtree_symbol(top)),
    .flags = flags_of(language, top, 0),
  };
  uint32_t count = 1;
  Frame *stack = NULL;
  uint32_t size = 0, stack_capacity = 0;
  if (ts_subtree_child_count(top) > 0 &&
      !push(&stack, &size, &stack_capacity, frame_of(language, top, out[0].start, 0, 0))) {
    return UINT32_MAX;
  }
  while (size > 0) {
    Frame *frame = &stack[size - 1];
    uint32_t child_count = frame->child_count;
    if (frame->child_index == child_count) {
      size--;
      continue;
    }
    const Subtree *children = frame->children;
    Subtree child = children[frame->child_index];
    bool extra = ts_subtree_extra(child);
    TSSymbol alias = 0;
    uint16_t field = 0;
    if (!extra) {
      if (frame->aliases) alias = frame->aliases[frame->structural_index];
      for (const TSFieldMapEntry *map = frame->fields; map < frame->fields_end; map++) {
        if (!map->inherited && map->child_index == frame->structural_index) {
          field = map->field_id;
          break;
        }
      }
      if (!field) field = frame->inherited_field;
      frame->structural_index++;
    }
    uint32_t start = frame->position;
    uint32_t end = start + ts_subtree_size(child).bytes;
    frame->child_index++;
    frame->position = end;
    if (frame->child_index < child_count) {
      frame->position += ts_subtree_padding(children[frame->child_index]).bytes;
    }
    uint32_t visible_parent = frame->visible_parent;
    bool visible = ts_subtree_visible(child) || alias;
    if (visible) {
      if (count == capacity) {
        free(stack);
        return UINT32_MAX;
      }
      out[count] = (BankwiseEntry){
        .start = start,
        .end = end,
        .parent = visible_parent,
        .kind = public_symbol(language, alias ? alias : ts_subtree_symbol(child)),
        .field = field,
        .flags = flags_of(language, child, alias),
      };
      visible_parent = count++;
    }
    if (ts_subtree_child_count(child) > 0) {
      // `frame` may move when the stack grows.
      Frame next = frame_of(language, child, start, visible_parent, visible ? 0 : field);
      if (!push(&stack, &size, &stack_capacity, next)) {
        free(stack);
        return UINT32_MAX;
      }
    }
  }
  free(stack);
  return count;
}
