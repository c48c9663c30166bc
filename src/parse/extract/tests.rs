//! The extractor's own tests: chunked parsing against whole-file parsing.
use super::*;

/// Everything the later stages read, in a comparable form.
fn summary(file: &ParsedFile) -> String {
    let mut out = String::new();
    for f in &file.functions {
        out.push_str(&format!(
            "{} {:?} {:?} {:?}\n",
            f.display_name(),
            f.kind,
            f.launch_bounds,
            f.callees
        ));
        for a in &f.arrays {
            out.push_str(&format!(
                "  {} {} {:?} {:?} {:?}\n",
                a.name, a.elem_type, a.elem_bytes, a.dims, a.escapes
            ));
            for access in &a.accesses {
                out.push_str(&format!(
                    "    {:?} {} {} {:?}\n",
                    access.kind,
                    access.at,
                    access.text,
                    access.detail().member
                ));
            }
        }
    }
    for l in &file.launches {
        out.push_str(&format!(
            "launch {} {:?} {:?}\n",
            l.kernel, l.instance, l.block
        ));
    }
    out
}

#[test]
fn chunked_parsing_gives_the_same_model_as_whole_file_parsing() {
    let mut src = String::from("__shared__ float shared_everywhere[32];\n");
    for i in 0..60 {
        src.push_str(&format!(
            "#define T{i} 32
#define MACRO_LOAD{i}(k) escaped{i}[k]
enum {{ E{i} = {i} + 1 }};
struct S{i} {{ float a, b; }};
template <int R = 8, typename V = float>
__global__ void __launch_bounds__(T{i} * R) kernel{i}(V *out) {{
__shared__ V tile[T{i}][T{i} + 1];
__shared__ S{i} pairs[E{i}], escaped{i}[4];
for (int j = 0; j < T{i}; j += R) {{
    tile[threadIdx.y + j][threadIdx.x] += out[j];
}}
pairs[threadIdx.x % E{i}].b = tile[threadIdx.x][threadIdx.y] + shared_everywhere[threadIdx.x];
out[0] = MACRO_LOAD{i}(1).a;
}}
void host{i}(float *p) {{ kernel{i}<4><<<1, dim3(T{i}, 4)>>>(p); kernel{i}<<<1, dim3(T{i}, 8)>>>(p); }}
"
        ));
    }
    let defines = ["T3=16".to_string()];
    let (prelude, skipped) = (Prelude::default(), Skipped::default());
    let run = |ranges: &[std::ops::Range<usize>]| {
        Extractor::run(&src, &defines, &prelude, &[], &[], &skipped, ranges)
    };
    let (whole_clean, whole) = run(&super::super::chunks::whole(&src));
    let chunks = super::super::chunks::top_level_chunks(&src, 1024);
    assert!(chunks.len() > 20, "{} chunks", chunks.len());
    let (chunked_clean, chunked) = run(&chunks);
    assert!(whole_clean && chunked_clean);
    let whole = summary(&whole.finish());
    assert_eq!(whole, summary(&chunked.finish()));
    assert!(
        whole.contains("kernel3<4, float> Kernel Some(64)"),
        "{whole}"
    );
    assert!(
        whole.contains("tile float Some(4) [Some(16), Some(17)]"),
        "{whole}"
    );
    assert!(
        whole.contains("launch kernel5 Some(\"kernel5<8, float>\")"),
        "{whole}"
    );
}
