package io.tenantgateway.hami.region;

/**
 * Where each field of HAMi-core's shared region lies in one layout: byte offsets from the start of the file, little
 * endian, linux/amd64 (glibc {@code sem_t} is 32 bytes, 8-aligned). The offsets are derived below from the field
 * sizes, so that the arithmetic can be checked ({@code RegionLayoutTest} compares it with HAMi-core's numbers).
 *
 * @param size the struct's size: the least number of bytes a file of this layout has
 * @param slotSeqlock offset of the slot's seqlock, or -1 where the layout has none (v0)
 * @param lastKernelTime offset of {@code last_kernel_time}, or -1 where the layout has none (v0)
 */
record RegionLayout(RegionVersion version, int size, int deviceNum, int uuids, int limit, int smLimit, int procs,
        int procNum, int utilizationSwitch, int recentKernel, int priority, int lastKernelTime,
        int slotSize, int slotStatus, int slotSeqlock, int slotUsed, int memoryEntry, int slotDeviceUtil,
        int utilEntry) {

    static final int MAGIC = 19920718;
    static final int MAX_DEVICES = 16;
    static final int MAX_PROCESSES = 1024;
    static final int UUID_BYTES = 96;

    private static final int I32 = 4;
    private static final int U64 = 8;
    private static final int SEM_T = 32;
    private static final int UUIDS = MAX_DEVICES * UUID_BYTES; // 1536
    private static final int PER_DEVICE_U64 = MAX_DEVICES * U64; // 128: limit[16], sm_limit[16], monitorused[16]

    /** Offsets inside one {@code used[i]} entry (both layouts): context, module, data, offset, total. */
    static final int MEMORY_CONTEXT = 0;
    static final int MEMORY_MODULE = 8;
    static final int MEMORY_DATA = 16;
    static final int MEMORY_TOTAL = 32;
    /** Offset of {@code sm_util} inside one {@code device_util[i]} entry (both layouts): dec, enc, sm. */
    static final int UTIL_SM = 16;

    // v1 (HAMi-core v1.2). Slot: pid i32 @0, hostpid i32 @4, then
    //   used[16] of 8 u64 (context, module, data, offset, total, 3 unused)  = 16 * 64 = 1024 -> @8
    //   monitorused[16] u64                                                 = 128          -> @1032
    //   device_util[16] of 6 u64 (dec, enc, sm, 3 unused)                   = 16 * 48 = 768 -> @1160
    //   status i32 @1928, 4 bytes padding (the next u64 is 8-aligned), seqlock u64 @1936, 2 unused u64 @1944
    //   = 1960.
    static final int V1_MEMORY_ENTRY = 8 * U64; // 64
    static final int V1_UTIL_ENTRY = 6 * U64; // 48
    static final int V1_SLOT_USED = 2 * I32; // 8
    static final int V1_SLOT_MONITORUSED = V1_SLOT_USED + MAX_DEVICES * V1_MEMORY_ENTRY; // 1032
    static final int V1_SLOT_DEVICE_UTIL = V1_SLOT_MONITORUSED + PER_DEVICE_U64; // 1160
    static final int V1_SLOT_STATUS = V1_SLOT_DEVICE_UTIL + MAX_DEVICES * V1_UTIL_ENTRY; // 1928
    static final int V1_SLOT_SEQLOCK = V1_SLOT_STATUS + I32 + 4; // 1936
    static final int V1_SLOT_SIZE = V1_SLOT_SEQLOCK + U64 + 2 * U64; // 1960

    // v1 region: initialized_flag i32 @0, major_version u32 @4, minor_version u32 @8, sm_init_flag i32 @12,
    //   owner_pid u64 @16, sem @24 (32 bytes), device_num u64 @56, uuids[16][96] @64, limit[16] @1600,
    //   sm_limit[16] @1728, procs[1024] @1856, proc_num @2008896, utilization_switch @+4, recent_kernel @+8,
    //   priority @+12, last_kernel_time i64 @2008912, sem_postinit @2008920 (32 bytes) = 2008952.
    static final int V1_OWNER_PID = 4 * I32; // 16
    static final int V1_DEVICE_NUM = V1_OWNER_PID + U64 + SEM_T; // 56
    static final int V1_UUIDS = V1_DEVICE_NUM + U64; // 64
    static final int V1_LIMIT = V1_UUIDS + UUIDS; // 1600
    static final int V1_SM_LIMIT = V1_LIMIT + PER_DEVICE_U64; // 1728
    static final int V1_PROCS = V1_SM_LIMIT + PER_DEVICE_U64; // 1856
    static final int V1_PROC_NUM = V1_PROCS + MAX_PROCESSES * V1_SLOT_SIZE; // 2008896
    static final int V1_LAST_KERNEL_TIME = V1_PROC_NUM + 4 * I32; // 2008912, 8-aligned: no padding before it
    static final int V1_SIZE = V1_LAST_KERNEL_TIME + U64 + SEM_T; // 2008952

    // v0 (HAMi-core before versioned regions; HAMi's monitor declares it as a Go struct, Project-HAMi/HAMi package
    // pkg/monitor/nvidia/v0, laid out with Go's amd64 rules: a field aligns to its size, a struct to its largest
    // field). Slot: pid i32 @0, hostpid i32 @4, then
    //   used[16] of 5 u64 (context, module, data, offset, total)   = 16 * 40 = 640 -> @8
    //   monitorused[16] u64                                        = 128          -> @648
    //   device_util[16] of 3 u64 (dec, enc, sm)                    = 16 * 24 = 384 -> @776
    //   status i32 @1160, then 4 bytes tail padding (the slot is 8-aligned) = 1168. No seqlock.
    static final int V0_MEMORY_ENTRY = 5 * U64; // 40
    static final int V0_UTIL_ENTRY = 3 * U64; // 24
    static final int V0_SLOT_USED = 2 * I32; // 8
    static final int V0_SLOT_MONITORUSED = V0_SLOT_USED + MAX_DEVICES * V0_MEMORY_ENTRY; // 648
    static final int V0_SLOT_DEVICE_UTIL = V0_SLOT_MONITORUSED + PER_DEVICE_U64; // 776
    static final int V0_SLOT_STATUS = V0_SLOT_DEVICE_UTIL + MAX_DEVICES * V0_UTIL_ENTRY; // 1160
    static final int V0_SLOT_SIZE = V0_SLOT_STATUS + I32 + 4; // 1168

    // v0 region: initialized_flag i32 @0, sm_init_flag i32 @4, owner_pid @8 (uint32 in HAMi's Go struct, size_t
    //   in HAMi-core's C), sem (32 bytes; Go @12, C @16 as sem_t is 8-aligned), then device_num u64 @48 in both:
    //   Go pads 44 to 48, C ends the semaphore at 48. uuids @56, limit @1592, sm_limit @1720, procs @1848,
    //   proc_num @1197880, utilization_switch @+4, recent_kernel @+8, priority @+12 = 1197896 (a multiple of 8,
    //   no tail padding). HAMi-core of that era sized the file by writing one byte at offset sizeof(region), so
    //   real v0 files are 1197897 bytes: the exact size older HAMi monitors tested for.
    static final int V0_DEVICE_NUM = 48;
    static final int V0_UUIDS = V0_DEVICE_NUM + U64; // 56
    static final int V0_LIMIT = V0_UUIDS + UUIDS; // 1592
    static final int V0_SM_LIMIT = V0_LIMIT + PER_DEVICE_U64; // 1720
    static final int V0_PROCS = V0_SM_LIMIT + PER_DEVICE_U64; // 1848
    static final int V0_PROC_NUM = V0_PROCS + MAX_PROCESSES * V0_SLOT_SIZE; // 1197880
    static final int V0_SIZE = V0_PROC_NUM + 4 * I32; // 1197896

    static final RegionLayout V1 = new RegionLayout(RegionVersion.V1, V1_SIZE, V1_DEVICE_NUM, V1_UUIDS, V1_LIMIT,
            V1_SM_LIMIT, V1_PROCS, V1_PROC_NUM, V1_PROC_NUM + I32, V1_PROC_NUM + 2 * I32, V1_PROC_NUM + 3 * I32,
            V1_LAST_KERNEL_TIME, V1_SLOT_SIZE, V1_SLOT_STATUS, V1_SLOT_SEQLOCK, V1_SLOT_USED, V1_MEMORY_ENTRY,
            V1_SLOT_DEVICE_UTIL, V1_UTIL_ENTRY);

    static final RegionLayout V0 = new RegionLayout(RegionVersion.V0, V0_SIZE, V0_DEVICE_NUM, V0_UUIDS, V0_LIMIT,
            V0_SM_LIMIT, V0_PROCS, V0_PROC_NUM, V0_PROC_NUM + I32, V0_PROC_NUM + 2 * I32, V0_PROC_NUM + 3 * I32,
            -1, V0_SLOT_SIZE, V0_SLOT_STATUS, -1, V0_SLOT_USED, V0_MEMORY_ENTRY, V0_SLOT_DEVICE_UTIL,
            V0_UTIL_ENTRY);

    /** Offset of process slot {@code index}. */
    int slot(int index) {
        return procs + index * slotSize;
    }

    /** Whether slots carry a seqlock (v1) that a reader must check. */
    boolean hasSeqlock() {
        return slotSeqlock >= 0;
    }
}
