//! A 32-bit program recorded: its calls have another ABI's numbers (i386's `read` is
//! x86_64's `close`), which the capture does not decode. They are left out and the trace
//! says so — never recorded as the 64-bit calls their numbers would be, never silently lost.

use super::*;

/// A static i386 ELF program of 154 bytes, no libc: open("data", O_RDONLY), read 4096 bytes
/// of it into its stack, close it, exit(0) — through `int 0x80`.
fn i386_program() -> Vec<u8> {
    const BASE: u32 = 0x0804_8000;
    const HEADERS: u32 = 52 + 32;
    let code = |path: u32| {
        let mut c = Vec::new();
        let mut op = |bytes: &[u8], imm: Option<u32>| {
            c.extend_from_slice(bytes);
            if let Some(v) = imm {
                c.extend_from_slice(&v.to_le_bytes());
            }
        };
        op(b"\xb8", Some(5)); // mov eax, 5 (open)
        op(b"\xbb", Some(path)); // mov ebx, path
        op(b"\x31\xc9\xcd\x80", None); // xor ecx, ecx; int 0x80
        op(b"\x89\xc3", None); // mov ebx, eax (the descriptor)
        op(b"\x81\xec", Some(4096)); // sub esp, 4096
        op(b"\xb8", Some(3)); // mov eax, 3 (read)
        op(b"\x89\xe1", None); // mov ecx, esp
        op(b"\xba", Some(4096)); // mov edx, 4096
        op(b"\xcd\x80", None);
        op(b"\xb8", Some(6)); // mov eax, 6 (close)
        op(b"\xcd\x80", None);
        op(b"\xb8", Some(1)); // mov eax, 1 (exit)
        op(b"\x31\xdb\xcd\x80", None); // xor ebx, ebx; int 0x80
        c
    };
    let path_at = BASE + HEADERS + code(0).len() as u32;
    let mut body = code(path_at);
    body.extend_from_slice(b"data\0");
    let size = HEADERS + body.len() as u32;
    let mut elf = b"\x7fELF\x01\x01\x01\0".to_vec();
    elf.extend_from_slice(&[0; 8]);
    // ET_EXEC, EM_386, version, entry, phoff, shoff, flags, ehsize, phentsize, phnum,
    // shentsize, shnum, shstrndx.
    for (v, w) in [
        (2, 2),
        (3, 2),
        (1, 4),
        (BASE + HEADERS, 4),
        (52, 4),
        (0, 4),
        (0, 4),
        (52, 2),
        (32, 2),
        (1, 2),
        (0, 2),
        (0, 2),
        (0, 2),
    ] {
        elf.extend_from_slice(&v.to_le_bytes()[..w]);
    }
    // PT_LOAD of the whole file, read/write/execute.
    for v in [1, 0, BASE, BASE, size, size, 7, 0x1000] {
        elf.extend_from_slice(&u32::to_le_bytes(v));
    }
    elf.extend_from_slice(&body);
    elf
}

#[test]
fn a_32_bit_programs_calls_are_left_out_and_said_not_decoded_as_others() {
    let d = tmp();
    let dir = d.path();
    let prog = dir.join("t32");
    std::fs::write(&prog, i386_program()).unwrap();
    std::fs::set_permissions(&prog, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::write(dir.join("data"), vec![5u8; 8192]).unwrap();
    std::fs::write(dir.join("other"), vec![6u8; 3000]).unwrap();
    match Command::new(&prog).current_dir(dir).status() {
        Ok(s) if s.success() => {}
        r => {
            skip!("this kernel runs no i386 program (IA32 emulation off?): {r:?}");
            return;
        }
    }
    // A 64-bit shell runs it, then a 64-bit cat: cat's calls are recorded, the 32-bit
    // program's are not.
    let script = "./t32 && cat other > /dev/null";
    for method in ["auto", "ptrace"] {
        let trace = dir.join(format!("{method}.iogtrace"));
        let method_arg = format!("--method={method}");
        let o = run_in(
            dir,
            &[
                "record",
                "-o",
                trace.to_str().unwrap(),
                &method_arg,
                "--",
                "sh",
                "-c",
                script,
            ],
        );
        if !o.status.success() && stderr(&o).contains("perf") {
            skip!("perf cannot record here: {}", stderr(&o));
            continue;
        }
        assert_eq!(o.status.code(), Some(0), "{method}: {}", stderr(&o));
        let said = stderr(&o);
        assert!(
            said.contains("INCOMPLETE") && said.contains("1 process that ran a 32-bit program"),
            "{method}: {said}"
        );
        let v = trace_stats(dir, trace.to_str().unwrap());
        assert_eq!(v["processes_32bit"], 1, "{method}: {v}");
        let file = |end: &str| {
            v["files"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["path"].as_str().unwrap().ends_with(end))
                .cloned()
        };
        let other = file("/other").expect("cat's file is in the trace");
        assert_eq!(other["reads"]["bytes"], 3000, "{method}: {other}");
        assert!(file("/data").is_none(), "{method}: {v}");
        let text = ok_in(dir, &["trace", "stats", trace.to_str().unwrap()]);
        assert!(text.contains("32-bit program"), "{method}: {text}");
        // Replayed, it says what it could not do: the report, text and JSON alike.
        let replay = |format: &str| {
            let fmt = format!("--output-format={format}");
            let args = ["replay", trace.to_str().unwrap(), "--directory=.", &fmt];
            ok_in(dir, &args)
        };
        let v: Value = serde_json::from_str(&replay("json")).unwrap();
        let said = v["incomplete"].as_str().unwrap_or_default();
        assert!(said.contains("32-bit program"), "{method}: {v}");
        let text = replay("text");
        assert!(
            text.contains("INCOMPLETE trace: it misses")
                && text.contains("1 process that ran a 32-bit program"),
            "{method}: {text}"
        );
    }
}
