/* Lathe measurement tool (tools/mesa-baseline): Mesa's Valhall compiler on a
 * SPIR-V entry point, with a minimal Vulkan-style lowering. Built inside a
 * Mesa 25.0.7 tree as src/panfrost/compiler/lathe_baseline.c (see README). */
#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compiler/glsl_types.h"
#include "compiler/nir/nir.h"
#include "compiler/nir/nir_builder.h"
#include "compiler/spirv/nir_spirv.h"
#include "compiler/spirv/spirv_info.h"
#include "bifrost_compile.h"
#include "util/u_dynarray.h"
#include "util/macros.h"

/* Lathe baseline: a minimal Vulkan-style lowering so SPIR-V of any stage
 * reaches ir3 (non-bindless indices, numbered densely per kind). */
static int lathe_index[4][8][64]; /* kind (0 ubo, 1 ssbo, 2 texture/sampler, 3 image), set, binding */

static unsigned
lathe_var_index(nir_variable *v)
{
   int kind = v->data.mode == nir_var_mem_ubo ? 0 : v->data.mode == nir_var_mem_ssbo ? 1 :
              glsl_type_is_image(glsl_without_array(v->type)) ? 3 : 2;
   return lathe_index[kind][v->data.descriptor_set & 7][v->data.binding & 63];
}
static bool
lathe_lower_vk_instr(nir_builder *b, nir_instr *instr, void *data)
{
   b->cursor = nir_before_instr(instr);
   if (instr->type == nir_instr_type_tex) {
      nir_tex_instr *tex = nir_instr_as_tex(instr);
      for (int kind = 0; kind < 2; kind++) {
         nir_tex_src_type t = kind ? nir_tex_src_sampler_deref : nir_tex_src_texture_deref;
         int i = nir_tex_instr_src_index(tex, t);
         if (i < 0)
            continue;
         nir_deref_instr *d = nir_src_as_deref(tex->src[i].src);
         unsigned idx = 0;
         if (d->deref_type == nir_deref_type_array) {
            if (nir_src_is_const(d->arr.index))
               idx = nir_src_as_uint(d->arr.index);
            d = nir_deref_instr_parent(d);
         }
         nir_variable *v = nir_deref_instr_get_variable(d);
         idx += lathe_var_index(v);
         nir_tex_instr_remove_src(tex, i);
         if (kind)
            tex->sampler_index = idx;
         else
            tex->texture_index = idx;
      }
      return true;
   }
   if (instr->type != nir_instr_type_intrinsic)
      return false;
   nir_intrinsic_instr *intr = nir_instr_as_intrinsic(instr);
   switch (intr->intrinsic) {
   case nir_intrinsic_vulkan_resource_index: {
      int kind = nir_intrinsic_desc_type(intr) == 6 ||
                 nir_intrinsic_desc_type(intr) == 8 ? 0 : 1;
      unsigned base = lathe_index[kind][nir_intrinsic_desc_set(intr) & 7][nir_intrinsic_binding(intr) & 63];
      nir_def *v = nir_vec2(b, nir_iadd_imm(b, intr->src[0].ssa, base), nir_imm_int(b, 0));
      nir_def_replace(&intr->def, v);
      return true;
   }
   case nir_intrinsic_vulkan_resource_reindex: {
      nir_def *v = nir_vec2(b, nir_iadd(b, nir_channel(b, intr->src[0].ssa, 0), intr->src[1].ssa),
                            nir_channel(b, intr->src[0].ssa, 1));
      nir_def_replace(&intr->def, v);
      return true;
   }
   case nir_intrinsic_load_vulkan_descriptor:
      nir_def_replace(&intr->def, intr->src[0].ssa);
      return true;
   default:
      break;
   }
   if (intr->intrinsic >= nir_intrinsic_image_deref_atomic &&
       intr->intrinsic <= nir_intrinsic_image_deref_store) {
      const char *name = nir_intrinsic_infos[intr->intrinsic].name;
      if (strncmp(name, "image_deref_", 12) != 0)
         return false;
      nir_deref_instr *d = nir_src_as_deref(intr->src[0]);
      unsigned idx = 0;
      if (d->deref_type == nir_deref_type_array) {
         if (nir_src_is_const(d->arr.index))
            idx = nir_src_as_uint(d->arr.index);
         d = nir_deref_instr_parent(d);
      }
      nir_variable *v = nir_deref_instr_get_variable(d);
      idx += lathe_var_index(v);
      nir_rewrite_image_intrinsic(intr, nir_imm_int(b, idx), false);
      return true;
   }
   return false;
}

static void
lathe_lower_vk(nir_shader *nir)
{
   NIR_PASS_V(nir, nir_lower_variable_initializers, nir_var_function_temp);
   NIR_PASS_V(nir, nir_lower_returns);
   NIR_PASS_V(nir, nir_inline_functions);
   NIR_PASS_V(nir, nir_copy_prop);
   NIR_PASS_V(nir, nir_opt_deref);
   nir_remove_non_entrypoints(nir);
   NIR_PASS_V(nir, nir_lower_variable_initializers, ~nir_var_function_temp);
   NIR_PASS_V(nir, nir_split_var_copies);
   NIR_PASS_V(nir, nir_split_per_member_structs);
   NIR_PASS_V(nir, nir_remove_dead_variables,
              nir_var_shader_in | nir_var_shader_out | nir_var_system_value | nir_var_mem_shared, NULL);
   NIR_PASS_V(nir, nir_lower_global_vars_to_local);
   NIR_PASS_V(nir, nir_lower_vars_to_ssa);
   NIR_PASS_V(nir, nir_lower_var_copies);
   NIR_PASS_V(nir, nir_opt_copy_prop_vars);
   NIR_PASS_V(nir, nir_opt_dce);
   unsigned counts[4] = {0};
   nir_foreach_variable_in_shader(v, nir) {
      if (!(v->data.mode & (nir_var_mem_ubo | nir_var_mem_ssbo | nir_var_uniform | nir_var_image)))
         continue;
      int kind = v->data.mode == nir_var_mem_ubo ? 0 : v->data.mode == nir_var_mem_ssbo ? 1 :
                 glsl_type_is_image(glsl_without_array(v->type)) ? 3 : 2;
      if (kind == 2 && !glsl_type_is_texture(glsl_without_array(v->type)) &&
          !glsl_type_is_sampler(glsl_without_array(v->type)))
         continue;
      unsigned n = glsl_type_is_array(v->type) ? MAX2(1, glsl_array_size(v->type)) : 1;
      lathe_index[kind][v->data.descriptor_set & 7][v->data.binding & 63] = counts[kind];
      v->data.driver_location = counts[kind];
      if (kind == 1)
         v->data.location = counts[kind];
      counts[kind] += n;
   }
   nir->info.num_ubos = counts[0];
   nir->info.num_ssbos = counts[1];
   nir->info.num_textures = counts[2];
   nir->info.num_images = counts[3];
   NIR_PASS_V(nir, nir_lower_explicit_io, nir_var_mem_push_const, nir_address_format_32bit_offset);
   NIR_PASS_V(nir, nir_lower_explicit_io, nir_var_mem_ubo | nir_var_mem_ssbo,
              nir_address_format_32bit_index_offset);
   if (nir->info.stage == MESA_SHADER_COMPUTE || nir->info.shared_size) {
      NIR_PASS_V(nir, nir_lower_vars_to_explicit_types, nir_var_mem_shared, glsl_get_natural_size_align_bytes);
      NIR_PASS_V(nir, nir_lower_explicit_io, nir_var_mem_shared, nir_address_format_32bit_offset);
   }
   NIR_PASS_V(nir, nir_shader_instructions_pass, lathe_lower_vk_instr, nir_metadata_control_flow, NULL);
   NIR_PASS_V(nir, nir_opt_dce);
   nir_assign_io_var_locations(nir, nir_var_shader_in, &nir->num_inputs, nir->info.stage);
   nir_assign_io_var_locations(nir, nir_var_shader_out, &nir->num_outputs, nir->info.stage);
}


/* Driver-provided values (panvk keeps them in push-constant sysvals). */
static bool
lathe_lower_sysvals(nir_builder *b, nir_intrinsic_instr *intr, void *data)
{
   static const nir_intrinsic_op ops[] = {
      nir_intrinsic_load_viewport_scale, nir_intrinsic_load_viewport_offset,
      nir_intrinsic_load_base_workgroup_id, nir_intrinsic_load_num_workgroups,
      nir_intrinsic_load_first_vertex, nir_intrinsic_load_base_instance,
      nir_intrinsic_load_base_vertex, nir_intrinsic_load_draw_id,
      nir_intrinsic_load_workgroup_size,
   };
   for (unsigned k = 0; k < ARRAY_SIZE(ops); k++) {
      if (intr->intrinsic != ops[k])
         continue;
      b->cursor = nir_before_instr(&intr->instr);
      nir_def *v = nir_load_push_constant(b, intr->def.num_components, intr->def.bit_size,
                                          nir_imm_int(b, 0), .base = 256 + 16 * k, .range = 16);
      nir_def_replace(&intr->def, v);
      return true;
   }
   return false;
}

int
main(int argc, char **argv)
{
   if (argc < 4)
      errx(1, "usage: %s GPU_ID_HEX file.spv entry (env PAN_STAGE=vert|frag|comp)", argv[0]);
   unsigned gpu_id = strtoul(argv[1], NULL, 16);
   const char *st = getenv("PAN_STAGE");
   gl_shader_stage stage = MESA_SHADER_COMPUTE;
   if (st && !strcmp(st, "vert"))
      stage = MESA_SHADER_VERTEX;
   if (st && !strcmp(st, "frag"))
      stage = MESA_SHADER_FRAGMENT;
   glsl_type_singleton_init_or_ref();
   FILE *f = fopen(argv[2], "rb");
   if (!f)
      err(1, "%s", argv[2]);
   fseek(f, 0, SEEK_END);
   long size = ftell(f);
   rewind(f);
   uint32_t *words = malloc(size);
   if (fread(words, 1, size, f) != (size_t)size)
      errx(1, "short read");
   fclose(f);
   const struct spirv_capabilities caps = {
      .DrawParameters = true, .StorageImageReadWithoutFormat = true,
      .StorageImageWriteWithoutFormat = true, .Int64 = true, .VariablePointers = true,
      .Float16 = true, .Int16 = true, .ImageQuery = true, .DerivativeControl = true,
      .SampledCubeArray = true, .ImageCubeArray = true, .MultiView = true,
   };
   const struct spirv_to_nir_options opts = {
      .capabilities = &caps,
      .ubo_addr_format = nir_address_format_32bit_index_offset,
      .ssbo_addr_format = nir_address_format_32bit_index_offset,
      .push_const_addr_format = nir_address_format_32bit_offset,
      .shared_addr_format = nir_address_format_32bit_offset,
   };
   nir_shader *nir = spirv_to_nir(words, size / 4, NULL, 0, stage, argv[3], &opts,
                                  &bifrost_nir_options_v9);
   if (!nir)
      errx(1, "spirv_to_nir failed");
   nir_lower_system_values(nir);
   static const nir_lower_compute_system_values_options csv = { .has_base_workgroup_id = true };
   nir_lower_compute_system_values(nir, &csv);
   lathe_lower_vk(nir);
   bifrost_preprocess_nir(nir, gpu_id);
   NIR_PASS_V(nir, nir_shader_intrinsics_pass, lathe_lower_sysvals, nir_metadata_control_flow, NULL);
   struct panfrost_compile_inputs inputs = { .gpu_id = gpu_id, .no_idvs = getenv("PAN_IDVS") == NULL, .pushable_ubos = ~0u };
   struct util_dynarray binary;
   util_dynarray_init(&binary, NULL);
   struct pan_shader_info info = {0};
   bifrost_compile_shader_nir(nir, &inputs, &binary, &info);
   printf("binary bytes: %u\n", binary.size);
   return 0;
}
