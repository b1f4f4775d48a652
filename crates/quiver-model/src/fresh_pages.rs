//! Which pages to ask for when a large build writes fresh memory: transparent huge pages or
//! ordinary ones.
//!
//! The first write to a fresh page makes the kernel find it and zero it. On a machine of
//! its own, a 2 MiB huge page is found once for 512 ordinary pages and is the cheaper by
//! far; its entry also spares the TLB. A virtual machine whose balloon reports free pages
//! to its host (virtio's free page reporting) turns this around: a huge page needs a
//! contiguous 2 MiB block, which the kernel mostly finds in memory it reported and the host
//! took back, so the host must give and zero it again, while ordinary pages come from what
//! was just freed. Measured on such a machine (2 cores), writing fresh memory ran at
//! 0.44 GB/s in huge pages and 2.7 GB/s in ordinary ones, and a bulk load of LUBM-1000
//! spent 85 % of its index layout in the kernel with huge pages, 45 % with ordinary ones
//! (the layout 4.3 s against 1.3 s). Timing a few fresh pages of each kind at start was
//! tried and misled: right after another process freed its memory, huge pages come fast.
//! So the balloon's feature is read instead (`/sys/bus/virtio/devices`), and large build
//! buffers (`ColumnBuffer::zeroed`, `Column::with_huge_pages`) ask for ordinary pages when
//! it is on, for huge pages otherwise.

use memmap2::MmapMut;

/// Advises `map`, still untouched, to use the pages that fault in faster here (the balloon's
/// feature is read on the first call). Only a hint: a kernel without transparent huge pages
/// ignores it, and other systems are given none.
pub fn advise_fresh(map: &MmapMut) {
    #[cfg(target_os = "linux")]
    let _ = map.advise(balloon::advice());
    #[cfg(not(target_os = "linux"))]
    let _ = map;
}

/// Writes a byte to every 4 KiB page of a fresh mapping of `bytes`, advised as large build
/// buffers are, and returns the pages written (0 where the mapping is refused): the
/// kernel's work of giving and zeroing fresh memory, which `quiver bench scale` measures
/// on every thread count.
pub fn touch_fresh(bytes: usize) -> usize {
    let Ok(mut map) = MmapMut::map_anon(bytes) else {
        return 0;
    };
    advise_fresh(&map);
    let mut pages = 0;
    for page in map.chunks_mut(4096) {
        // SAFETY: `page` is a live, exclusively borrowed, non-empty slice of the mapping;
        // the write is volatile because the mapping is unmapped unread, and an ordinary
        // store to it could be elided.
        unsafe { std::ptr::write_volatile(page.as_mut_ptr(), 1) };
        pages += 1;
    }
    pages
}

#[cfg(target_os = "linux")]
mod balloon {
    use std::sync::OnceLock;

    use memmap2::Advice;

    /// The virtio device id of a memory balloon.
    const BALLOON_DEVICE: &str = "0x0005";
    /// The balloon's feature bit for free page reporting (`VIRTIO_BALLOON_F_REPORTING`).
    const REPORTING_FEATURE: usize = 5;

    /// The pages a fresh mapping should be advised to use: ordinary ones under a balloon
    /// that reports free pages, huge ones otherwise. Read once.
    pub(super) fn advice() -> Advice {
        static ADVICE: OnceLock<Advice> = OnceLock::new();
        *ADVICE.get_or_init(|| {
            if free_pages_reported() {
                Advice::NoHugePage
            } else {
                Advice::HugePage
            }
        })
    }

    /// Whether a bound virtio balloon reports free pages to the host.
    fn free_pages_reported() -> bool {
        let Ok(devices) = std::fs::read_dir("/sys/bus/virtio/devices") else {
            return false;
        };
        devices.flatten().any(|device| {
            let path = device.path();
            let read = |name: &str| std::fs::read_to_string(path.join(name)).unwrap_or_default();
            path.join("driver").exists() && reports_free_pages(&read("device"), &read("features"))
        })
    }

    /// Whether a virtio device of id `device` with the feature bits `features` (as sysfs
    /// writes them: one character a bit, bit 0 first) is a balloon reporting free pages.
    pub(super) fn reports_free_pages(device: &str, features: &str) -> bool {
        device.trim() == BALLOON_DEVICE
            && features.trim().as_bytes().get(REPORTING_FEATURE) == Some(&b'1')
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use memmap2::{Advice, MmapMut};

    use super::balloon::{advice, reports_free_pages};
    use super::*;

    #[test]
    fn only_a_balloon_with_the_reporting_bit_asks_for_ordinary_pages() {
        let bits = |on: &[usize]| -> String {
            (0..64)
                .map(|i| if on.contains(&i) { '1' } else { '0' })
                .collect()
        };
        assert!(reports_free_pages("0x0005\n", &bits(&[1, 2, 5, 7])));
        assert!(!reports_free_pages("0x0005", &bits(&[1, 2, 7])));
        assert!(!reports_free_pages("0x0002", &bits(&[5])));
        assert!(!reports_free_pages("0x0005", "0110"));
        assert!(!reports_free_pages("", ""));
        let first = advice();
        assert!(matches!(first, Advice::HugePage | Advice::NoHugePage));
        assert_eq!(advice(), first);
        let mut map = MmapMut::map_anon(8 << 20).unwrap();
        advise_fresh(&map);
        map[(8 << 20) - 1] = 7;
        assert_eq!(map[(8 << 20) - 1], 7);
    }
}
