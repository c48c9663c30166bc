; Every declaration qualified `__shared__`, at any scope (a function body or namespace scope).
(declaration
  (type_qualifier) @qualifier
  (#eq? @qualifier "__shared__")) @declaration
