//! Every process of a cluster runs the same build: compared as the processes meet.
//!
//! The processes exchange timely's messages and their own (rows, plans, a load's terms and
//! edges) in a binary form that builds change without notice (`quiver_model::wire` changed
//! it last). A process of another build would misread them: timely's reader would fail
//! inside a worker and panic, or, worse, read a message as another. So once the
//! connections are made and before timely starts, each process sends every other, on the
//! heartbeat's connection, what tells its build — the length and CRC-32 of its executable
//! and its id width — and reads theirs. A process that differs is refused with its number
//! and address, on both sides, before any data moves. The executable is read once per
//! process (about 35 MB, a few milliseconds from the page cache).
//!
//! A build from before this check sends heartbeat bytes instead, which are no build's
//! record: it is refused too.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::OnceLock;
use std::time::Duration;

use quiver_model::ID_BYTES;

/// What opens a build's record.
const MAGIC: &[u8; 8] = b"QVRBUILD";

/// How long a process waits for another's record: the other sends it once all its own
/// connections are made, which the slowest process of the cluster sets the pace of.
const WAIT: Duration = Duration::from_secs(120);

/// What tells a build from another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Build {
    /// The executable's length and CRC-32 (0 and 0 where it cannot be read).
    executable_bytes: u64,
    checksum: u32,
    id_bytes: u32,
}

impl Build {
    /// This process's build.
    pub(crate) fn this() -> Build {
        static THIS: OnceLock<Build> = OnceLock::new();
        *THIS.get_or_init(|| {
            // On Linux the running image itself, even where its file was replaced or
            // removed since it started (its path would then name another build, or none).
            let running = if cfg!(target_os = "linux") {
                std::fs::read("/proc/self/exe")
            } else {
                Err(std::io::ErrorKind::Unsupported.into())
            };
            let executable = running.or_else(|_| std::env::current_exe().and_then(std::fs::read));
            let (executable_bytes, checksum) = match executable {
                Ok(bytes) => (bytes.len() as u64, crc32fast::hash(&bytes)),
                Err(_) => (0, 0),
            };
            Build {
                executable_bytes,
                checksum,
                id_bytes: ID_BYTES as u32,
            }
        })
    }

    fn record(&self) -> [u8; 24] {
        let mut record = [0u8; 24];
        record[..8].copy_from_slice(MAGIC);
        record[8..16].copy_from_slice(&self.executable_bytes.to_le_bytes());
        record[16..20].copy_from_slice(&self.checksum.to_le_bytes());
        record[20..24].copy_from_slice(&self.id_bytes.to_le_bytes());
        record
    }

    /// The build a record tells, or `None` for bytes that are no build's record.
    fn read(record: &[u8; 24]) -> Option<Build> {
        let word = |at: usize| u32::from_le_bytes([0, 1, 2, 3].map(|i| record[at + i]));
        (&record[..8] == MAGIC).then(|| Build {
            executable_bytes: u64::from(word(8)) | u64::from(word(12)) << 32,
            checksum: word(16),
            id_bytes: word(20),
        })
    }
}

impl std::fmt::Display for Build {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "an executable of {} bytes with CRC-32 {:08x}, {}-byte ids",
            self.executable_bytes, self.checksum, self.id_bytes
        )
    }
}

/// Sends `mine` to every other process on its heartbeat's connection (`beats`, by process;
/// `None` for this one) and reads theirs; an error naming the first process whose build
/// differs, or that sent no build's record. The connections are left blocking, without a
/// read timeout.
pub(crate) fn compare(
    beats: &[Option<TcpStream>],
    addresses: &[String],
    mine: Build,
) -> Result<(), String> {
    let record = mine.record();
    for (process, stream) in beats.iter().enumerate() {
        if let Some(mut stream) = stream.as_ref() {
            stream
                .write_all(&record)
                .map_err(|e| format!("cannot send this build to process {process}: {e}"))?;
        }
    }
    for (process, stream) in beats.iter().enumerate() {
        let Some(mut stream) = stream.as_ref() else {
            continue;
        };
        let at = addresses.get(process).map_or("?", String::as_str);
        let mut theirs = [0u8; 24];
        stream
            .set_read_timeout(Some(WAIT))
            .and_then(|()| stream.read_exact(&mut theirs))
            .and_then(|()| stream.set_read_timeout(None))
            .map_err(|e| {
                format!(
                    "process {process} ({at}) did not tell its build ({e}): every process \
                     of a cluster must run the same quiver binary"
                )
            })?;
        match Build::read(&theirs) {
            Some(build) if build == mine => {}
            Some(build) => {
                return Err(format!(
                    "process {process} ({at}) runs another build of quiver ({build}; this \
                     process: {mine}): every process of a cluster must run the same binary"
                ))
            }
            None => {
                return Err(format!(
                    "process {process} ({at}) runs an older or a foreign build of quiver: \
                     every process of a cluster must run the same binary"
                ))
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::net::TcpListener;

    use super::*;

    /// Both ends of one loopback connection, as processes 0 and 1 hold them.
    fn pair() -> (Vec<Option<TcpStream>>, Vec<Option<TcpStream>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let later = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (earlier, _) = listener.accept().unwrap();
        (vec![None, Some(earlier)], vec![Some(later), None])
    }

    /// Each side compares on its own thread, as each process does; their outcomes.
    fn meet(first: Build, second: Build) -> (Result<(), String>, Result<(), String>) {
        let addresses = vec!["host-0:7000".to_string(), "host-1:7000".to_string()];
        let (zero, one) = pair();
        std::thread::scope(|scope| {
            let zero = scope.spawn(|| compare(&zero, &addresses, first));
            let one = scope.spawn(|| compare(&one, &addresses, second));
            (zero.join().unwrap(), one.join().unwrap())
        })
    }

    #[test]
    fn this_build_is_read_from_the_executable_once() {
        let build = Build::this();
        assert!(build.executable_bytes > 0, "{build}");
        assert_eq!(build.id_bytes, ID_BYTES as u32);
        assert_eq!(Build::this(), build);
        assert_eq!(Build::read(&build.record()), Some(build));
    }

    #[test]
    fn processes_of_one_build_meet() {
        let (zero, one) = meet(Build::this(), Build::this());
        assert_eq!(zero, Ok(()));
        assert_eq!(one, Ok(()));
    }

    /// A process of another build is refused on both sides, each naming the other.
    #[test]
    fn processes_of_two_builds_refuse_each_other() {
        let other = Build {
            checksum: Build::this().checksum ^ 1,
            ..Build::this()
        };
        let (zero, one) = meet(Build::this(), other);
        let zero = zero.unwrap_err();
        assert!(
            zero.contains("process 1 (host-1:7000) runs another build"),
            "{zero}"
        );
        let one = one.unwrap_err();
        assert!(
            one.contains("process 0 (host-0:7000) runs another build"),
            "{one}"
        );
        // Ids of another width are another build too.
        let wide = Build {
            id_bytes: 8 + 4 - ID_BYTES as u32,
            ..Build::this()
        };
        let (zero, _) = meet(Build::this(), wide);
        assert!(zero.unwrap_err().contains("-byte ids"));
    }

    /// Bytes that are no build's record (a build from before the check beats at once) are
    /// refused as an older or foreign build.
    #[test]
    fn a_build_that_sends_no_record_is_refused() {
        let (zero, one) = pair();
        let addresses = vec!["a:1".to_string(), "b:2".to_string()];
        let older = std::thread::spawn(move || {
            let mut stream = one[0].as_ref().unwrap();
            stream.write_all(&[1u8; 24]).unwrap();
            // Its heartbeat reads and drops what it is sent.
            let mut sink = [0u8; 24];
            let _ = stream.read_exact(&mut sink);
        });
        let error = compare(&zero, &addresses, Build::this()).unwrap_err();
        assert!(
            error.contains("process 1 (b:2) runs an older or a foreign build"),
            "{error}"
        );
        older.join().unwrap();
    }
}
