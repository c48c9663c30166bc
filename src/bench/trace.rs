//! Traces: warp requests that the execution oracle (tests/oracle.rs) recorded for accesses
//! bankwise cannot simulate, such as a histogram's votes into data-dependent bins. A trace
//! lives beside the kernel's source (`histogram64.cu` → `histogram64.trace`), one request per
//! line: kernel, source line, kind, array, then each lane's element index (`-`: inactive).
//! With it the families are scored on what one seeded input does, as TC 2016 configures its
//! histograms from a trace.
use std::collections::HashMap;
use std::path::Path;

/// Where a request was made: kernel, source line, access kind and array.
type Place = (String, usize, String, String);

/// The requests of one trace file, by place.
#[derive(Debug, Default)]
pub struct Trace {
    requests: HashMap<Place, Vec<Vec<Option<i64>>>>,
}

impl Trace {
    /// The trace beside `source`, if there is one.
    pub fn beside(source: &Path) -> Result<Option<Trace>, String> {
        let path = source.with_extension("trace");
        if !path.is_file() {
            return Ok(None);
        }
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        Trace::parse(&text)
            .map(Some)
            .map_err(|e| format!("{}: {e}", path.display()))
    }

    pub fn parse(text: &str) -> Result<Trace, String> {
        let mut trace = Trace::default();
        for (number, line) in text.lines().enumerate() {
            if line.starts_with('#') || line.trim().is_empty() {
                continue;
            }
            let bad = |what: &str| format!("line {}: {what}", number + 1);
            let mut fields = line.split_whitespace();
            let mut field = |what: &str| fields.next().ok_or_else(|| bad(what)).map(str::to_string);
            let kernel = field("no kernel")?;
            let source_line = field("no source line")?
                .parse::<usize>()
                .map_err(|_| bad("the source line is not a number"))?;
            let kind = field("no access kind")?;
            let array = field("no array")?;
            let lanes = fields
                .map(|lane| match lane {
                    "-" => Ok(None),
                    index => index
                        .parse::<i64>()
                        .map(Some)
                        .map_err(|_| bad(&format!("`{index}` is not an element index"))),
                })
                .collect::<Result<Vec<_>, String>>()?;
            if lanes.is_empty() {
                return Err(bad("a request without lanes"));
            }
            trace
                .requests
                .entry((kernel, source_line, kind, array))
                .or_default()
                .push(lanes);
        }
        Ok(trace)
    }

    /// The requests recorded at a place.
    pub fn requests(
        &self,
        kernel: &str,
        line: usize,
        kind: &str,
        array: &str,
    ) -> Option<&[Vec<Option<i64>>]> {
        self.requests
            .get(&(
                kernel.to_string(),
                line,
                kind.to_string(),
                array.to_string(),
            ))
            .map(Vec::as_slice)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_is_read_by_place() {
        let trace =
            Trace::parse("# comment\nhist 39 atomic votes 3 - 67\nhist 39 atomic votes 1 2 3\n")
                .expect("valid");
        let requests = trace
            .requests("hist", 39, "atomic", "votes")
            .expect("recorded");
        assert_eq!(
            requests,
            &[
                vec![Some(3), None, Some(67)],
                vec![Some(1), Some(2), Some(3)]
            ]
        );
        assert!(trace.requests("hist", 40, "atomic", "votes").is_none());
    }

    #[test]
    fn malformed_traces_say_where() {
        assert_eq!(
            Trace::parse("hist x atomic votes 1").unwrap_err(),
            "line 1: the source line is not a number"
        );
        assert_eq!(
            Trace::parse("hist 3 atomic votes 1 y").unwrap_err(),
            "line 1: `y` is not an element index"
        );
        assert_eq!(
            Trace::parse("\nhist 3 atomic votes").unwrap_err(),
            "line 2: a request without lanes"
        );
    }
}
