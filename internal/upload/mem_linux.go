package upload

import "syscall"

// adviseHuge asks for transparent huge pages on a staged upload's mapping (where the system allows them only
// when asked, "madvise" mode): its first chunk then faults in a few 2 MiB pages instead of hundreds of 4 KiB
// ones. Only the mapping's aligned 2 MiB stretches can get them, so it stays within its declared size, which
// the budget charges. Failing, the mapping keeps small pages.
func adviseHuge(b []byte) { _ = syscall.Madvise(b, syscall.MADV_HUGEPAGE) }
