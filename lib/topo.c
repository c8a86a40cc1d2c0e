#include "topo.h"
#include "config.h"

#include <hwloc.h>
#include <stdio.h>
#include <string.h>

int ucoll__topo_query(ucoll_topo_t *topo)
{
    hwloc_topology_t t;
    hwloc_bitmap_t set;
    hwloc_obj_t obj;
    char list[64];

    memset(topo, 0, sizeof(*topo));
    topo->npus_machine = topo->npus_allowed = topo->ncores_machine = 1;
    topo->numa_node = -1;
    snprintf(topo->binding, sizeof(topo->binding), "unknown");
    if (hwloc_topology_init(&t) != 0) {
        return UCOLL_ERR_UNSUPPORTED;
    }
    if (hwloc_topology_load(t) != 0 || (set = hwloc_bitmap_alloc()) == NULL) {
        hwloc_topology_destroy(t);
        return UCOLL_ERR_UNSUPPORTED;
    }
    topo->npus_machine = UCOLL_MAX(1, hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU));
    topo->ncores_machine = UCOLL_MAX(1, hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE));
    if (hwloc_get_cpubind(t, set, HWLOC_CPUBIND_PROCESS) != 0) {
        hwloc_bitmap_copy(set, hwloc_topology_get_allowed_cpuset(t));
    }
    topo->npus_allowed = UCOLL_MAX(1, hwloc_bitmap_weight(set));
    hwloc_bitmap_list_snprintf(list, sizeof(list), set);
    if (hwloc_bitmap_isincluded(hwloc_topology_get_allowed_cpuset(t), set)) {
        snprintf(topo->binding, sizeof(topo->binding), "unbound (PUs %s)", list);
    } else {
        obj = hwloc_get_obj_covering_cpuset(t, set);
        while (obj && obj->type != HWLOC_OBJ_CORE && obj->type != HWLOC_OBJ_PU &&
               obj->type != HWLOC_OBJ_PACKAGE && obj->type != HWLOC_OBJ_MACHINE && obj->parent &&
               !hwloc_bitmap_isequal(obj->cpuset, set)) {
            obj = obj->parent;
        }
        snprintf(topo->binding, sizeof(topo->binding), "%s %u (PUs %s)",
                 obj ? hwloc_obj_type_string(obj->type) : "cpuset", obj ? obj->logical_index : 0,
                 list);
    }
    obj = hwloc_get_next_obj_covering_cpuset_by_type(t, set, HWLOC_OBJ_NUMANODE, NULL);
    if (obj &&
        hwloc_get_next_obj_covering_cpuset_by_type(t, set, HWLOC_OBJ_NUMANODE, obj) == NULL) {
        topo->numa_node = (int)obj->logical_index;
    }
    hwloc_bitmap_free(set);
    hwloc_topology_destroy(t);
    return UCOLL_OK;
}

int ucoll__topo_wait_mode(const ucoll_topo_t *topo, int configured, int local_size)
{
    if (configured == UCOLL_WAIT_AUTO) {
        return local_size > topo->npus_machine ? UCOLL_WAIT_YIELD : UCOLL_WAIT_SPIN;
    }
    return configured;
}
