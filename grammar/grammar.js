// bankwise's fork of tree-sitter-cuda 0.21.2 (see README.md for what changed
// and how to regenerate). The C and C++ base grammars under node_modules/ are
// vendored unmodified; every change lives in this file (and in the external
// scanner, src/scanner.c).
const CPP = require("tree-sitter-cpp/grammar")

// tree-sitter-cpp's precedence of `new` (its PREC.NEW), which it does not export.
const PREC_NEW = require("tree-sitter-c/grammar").PREC.CALL + 1

module.exports = grammar(CPP, {
    name: 'cuda',

    // bankwise: `_macro_statement_end` is a zero-width token produced by
    // src/scanner.c; see `macro_invocation_statement` below. Its position in
    // this list must match the TokenType enum in the scanner.
    externals: ($, original) => original.concat([
        $._macro_statement_end,
    ]),

    conflicts: ($, original) => original.concat([
        // `T x(int, ...)`: a parameter list or a (macro) argument list.
        [$.type_specifier, $._builtin_type_argument],
    ]),

    rules: {
        _top_level_item: (_, original) => original,

        // bankwise: a function-like macro invoked without a trailing `;` (it
        // typically expands to a declaration, e.g. `DECLARE_SMEM(float, t, 32)`)
        // used to swallow the following statement into an ERROR. Such a line is
        // now a `macro_invocation_statement` of its own. It only matches where
        // block items go (function and namespace bodies, not the top level nor
        // an `if`/`case` body), and only when the scanner sees the call
        // followed by a newline and then a word (not an alternative operator
        // such as `and`), `}` or `#`: no error-free C++ continues an expression
        // statement that way, so no valid code changes parse. The negative
        // dynamic precedence makes any other error-free reading win. The callee
        // is not restricted to an identifier: that would need `ident (` at
        // statement start to fork one more GLR version for every call
        // statement, whereas `call_expression` shares the ordinary call path.
        _block_item: ($, original) => choice(
            original,
            $.macro_invocation_statement,
        ),

        macro_invocation_statement: $ => prec.dynamic(-10, seq(
            $.call_expression,
            $._macro_statement_end,
        )),

        // bankwise: macros such as `DECLARE_SMEM(float, tile, 32);` take type
        // names as arguments; `float` there was an ERROR. A primitive type
        // (a keyword, so no clash with identifiers), optionally followed by
        // `*`s, is now accepted as a call argument, as a `type_descriptor`.
        // The negative dynamic precedence keeps `float(x)` functional casts and
        // `T f(int);` function declarators preferred wherever they also fit.
        // `unsigned`/`long`/... are left out: accepting them would make them
        // keywords in argument position and break `f(unsigned(x))`, which
        // stock parses (as a call of an identifier).
        argument_list: $ => seq(
            '(',
            commaSep(choice(
                $.expression,
                $.initializer_list,
                $.compound_statement,
                prec.dynamic(-1, alias($._builtin_type_argument, $.type_descriptor)),
            )),
            ')',
        ),

        _builtin_type_argument: $ => seq(
            field('type', $.primitive_type),
            field('declarator', optional(alias($._builtin_type_pointer, $.abstract_pointer_declarator))),
        ),

        _builtin_type_pointer: $ => seq(
            '*',
            field('declarator', optional(alias($._builtin_type_pointer, $.abstract_pointer_declarator))),
        ),

        _declaration_modifiers: ($, original) =>
            choice(
                $.launch_bounds,
                '__host__',
                prec(10, choice('__device__', '__tile__')),
                prec(10, choice('__global__', '__tile_global__')),
                '__forceinline__',
                '__noinline__',
                original
            ),

        delete_expression: (_, original) => prec.left(original),

        expression: ($, original) => choice(
            original,
            alias(prec(10, $.kernel_call_expression), $.call_expression),
        ),

        kernel_call_expression: ($) => prec(1,seq(
            field('function', $.expression),
            $.kernel_call_syntax,
            field('arguments', $.argument_list),
        )),

        kernel_call_syntax: $ => seq(alias(rep3('<'), '<<<'), $.expression, repeat(seq(",", $.expression)), alias(rep3('>'), '>>>')),

        // bankwise: `__align__(N)` is a qualifier like C++'s `alignas(N)`
        // (which the C grammar already lists here), so it may appear among the
        // declaration modifiers in any order, e.g. both
        // `__shared__ __align__(16) float buf[64];` and
        // `extern __shared__ __align__(sizeof(T)) unsigned char raw[];`.
        // Before, `__align__` was an identifier and `(16)` was read as a
        // parenthesized declarator, dropping or mangling the real declarator.
        type_qualifier: ($, original) => choice(
            original,
            '__shared__',
            '__global__',
            '__local__',
            '__device__',
            '__tile__',
            '__constant__',
            '__managed__',
            '__grid_constant__',
            $.align_specifier,
        ),

        // bankwise: `__align__(expr)` (and `__builtin_align__(expr)`, which
        // CUDA's vector_types.h uses), with the alignment expression as child.
        align_specifier: $ => seq(
            choice('__align__', '__builtin_align__'),
            '(',
            $.expression,
            ')',
        ),

        // bankwise: `struct __align__(16) Vec {...}`, `union __align__(16) U`,
        // `typedef struct __align__(8) {...} t;`: the specifier may follow the
        // class-key, where C++ allows attributes and `alignas`.
        _class_declaration: $ => seq(
            repeat(choice($.attribute_specifier, $.alignas_qualifier, $.align_specifier)),
            optional($.ms_declspec_modifier),
            repeat($.attribute_declaration),
            $._class_declaration_item,
        ),

        // bankwise: `ns::tmpl<32> var = ...;` in a block was, when it was not
        // the block's first statement, silently read as the comparison chain
        // `(ns::tmpl < 32) > (var = ...)`. Both readings are error-free and
        // their dynamic precedences tie (the qualified identifier's +1 against
        // the template argument's +1), so the pick fell to tree-sitter's
        // position-dependent tie-break. A relational `<` or `>` now carries -1,
        // so wherever a template-id reading is also error-free it wins, as C++
        // code that writes `a < b > c` almost always means a template.
        binary_expression: (_, original) => mapRule(original, rule =>
            rule.type === 'PREC_LEFT' && isRelationalAngle(rule.content)
                ? prec.dynamic(-1, rule)
                : undefined),

        // bankwise: extended lambdas, `[=] __host__ __device__ (int i) -> int {...}`
        // and `[] __device__ {...}`: execution-space annotations between the
        // capture (or template parameter list) and the declarator were ERRORs.
        // They are now `execution_space_specifier` children of the lambda.
        lambda_expression: $ => seq(
            field('captures', $.lambda_capture_specifier),
            optional(seq(
                field('template_parameters', $.template_parameter_list),
                optional(field('constraint', $.requires_clause)),
            )),
            repeat($.execution_space_specifier),
            optional(field('declarator', $.lambda_declarator)),
            field('body', $.compound_statement),
        ),

        execution_space_specifier: _ => choice('__host__', '__device__'),

        // bankwise: asm operands with no comma between them,
        // `:: "l"(p) "r"(v) : "memory"`, which nvcc accepts (a `,` between
        // two operands is optional there); the stock rule made the statement
        // an ERROR, and the function around it unparsed.
        gnu_asm_output_operand_list: $ => seq(
            ':',
            optional(seq(
                field('operand', $.gnu_asm_output_operand),
                repeat(seq(optional(','), field('operand', $.gnu_asm_output_operand))),
            )),
        ),

        gnu_asm_input_operand_list: $ => seq(
            ':',
            optional(seq(
                field('operand', $.gnu_asm_input_operand),
                repeat(seq(optional(','), field('operand', $.gnu_asm_input_operand))),
            )),
        ),

        // bankwise: an explicit instantiation of a class template,
        // `template class Engine<float>;` (and `extern template struct S<4>;`),
        // has specifiers and no declarator; the stock rule asks for one, so
        // the line was an ERROR. The declarator is now optional.
        template_instantiation: $ => prec(1, seq(
            optional('extern'),
            'template',
            optional($._declaration_specifiers),
            optional(field('declarator', $._declarator)),
            ';',
        )),

        // bankwise: `new const float *[n]` (an array of pointers, the type
        // qualified): the stock rule takes one type specifier and then only
        // `[n]`. Qualifiers may now stand around the type, and `*`s (each with
        // its qualifiers) before the `[n]`, as C++'s new-type-id allows.
        new_expression: $ => prec.right(PREC_NEW, seq(
            optional('::'),
            'new',
            field('placement', optional($.argument_list)),
            repeat($.type_qualifier),
            field('type', $.type_specifier),
            repeat($.type_qualifier),
            field('declarator', optional(choice($.new_declarator, $.new_pointer_declarator))),
            field('arguments', optional(choice(
                $.argument_list,
                $.initializer_list,
            ))),
        )),

        new_pointer_declarator: $ => prec.right(seq(
            '*',
            repeat($.type_qualifier),
            field('declarator', optional(choice($.new_declarator, $.new_pointer_declarator))),
        )),

        // bankwise: CUDA 12 added a third argument (max blocks per cluster).
        launch_bounds: $ => seq("__launch_bounds__", "(", $.expression, optional(seq(",", $.expression, optional(seq(",", $.expression)))), ")"),
    }
});

function rep3(obj) {
    return token(seq(obj, /\s*/, obj, /\s*/, obj));
}

// Rebuilds a rule tree, replacing each node for which `replace` returns a rule.
function mapRule(rule, replace) {
    const replaced = replace(rule);
    if (replaced !== undefined) {
        return replaced;
    }
    if (rule.members) {
        return {...rule, members: rule.members.map(member => mapRule(member, replace))};
    }
    if (rule.content) {
        return {...rule, content: mapRule(rule.content, replace)};
    }
    return rule;
}

// Whether `rule` is `seq(field('left', ...), field('operator', '<' or '>'), ...)`.
function isRelationalAngle(rule) {
    return rule.type === 'SEQ' && rule.members.some(member =>
        member.type === 'FIELD' && member.name === 'operator' &&
        member.content.type === 'STRING' && (member.content.value === '<' || member.content.value === '>'));
}

function commaSep(rule) {
    return optional(commaSep1(rule));
}

function commaSep1(rule) {
    return seq(rule, repeat(seq(',', rule)));
}
