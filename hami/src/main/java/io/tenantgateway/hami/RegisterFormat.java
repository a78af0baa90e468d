package io.tenantgateway.hami;

/** How a vendor's node register value is written; decides which decoder HAMi's scheduler runs on it. */
public enum RegisterFormat {
    /** JSON list of device objects ({@code id, index, count, devmem, devcore, type, numa, mode, health, …}). */
    JSON,
    /** {@code id,count,devmem,devcore,type,numa,health,index,mode:} per device (Hygon, Iluvatar). */
    LEGACY_TEXT,
    /** Metax sGPU's own JSON list ({@code uuid, bdf, model, totalDevCount, …}). */
    METAX_SGPU,
    /** Enflame's DRS capacity object ({@code {"devices":[…],"profiles":{…}}}). */
    ENFLAME_DRS
}
