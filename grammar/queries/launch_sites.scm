; Kernel launches `k<<<grid, block, smem, stream>>>(args)`, templated or not.
(call_expression
  function: (_) @kernel
  (kernel_call_syntax) @config) @launch
