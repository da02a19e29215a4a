// The catalog both pages start from (/v1/models, /v1/gpus, /v1/engines) and the select options
// built from it. A MIG slice is chosen as "<gpu>|<profile>" in the GPU select.

import { getJson } from "./api.js";

export const MIG_SEPARATOR = "|";

/** The catalog's lists; without the engine list a page still runs (and any engine a link names). */
export async function loadCatalog() {
  const [models, gpus, engines] = await Promise.all([
    getJson("models"),
    getJson("gpus"),
    getJson("engines").catch(() => ({ items: [] })),
  ]);
  return { models: models.items, gpus: gpus.items, engines: engines.items };
}

export function option(value, label) {
  const node = document.createElement("option");
  node.value = value;
  node.textContent = label;
  return node;
}

/** A value from the URL that the catalog does not list still shows, so the API can name it. */
export function ensureOption(select, value, label) {
  if (value === "" || [...select.options].some((o) => o.value === value)) return;
  select.append(option(value, label));
}

export function shortName(gpu) {
  return gpu.name.replace(/^(NVIDIA|AMD Instinct|AMD|Intel)\s+/, "");
}

/** The models as two option groups, dense and mixture of experts; each is noted in `known`. */
export function modelGroups(models, known) {
  const dense = document.createElement("optgroup");
  dense.label = "Dense";
  const moe = document.createElement("optgroup");
  moe.label = "Mixture of experts";
  for (const model of models) {
    known.set(model.slug, model);
    (model.experts ? moe : dense).append(option(model.slug, model.name));
  }
  return [dense, moe];
}

/** The whole GPUs as one option group, then one group of MIG slices per card that has them;
 * each GPU is noted in `known`. */
export function gpuGroups(gpus, known) {
  const whole = document.createElement("optgroup");
  whole.label = "Whole GPUs";
  const slices = [];
  for (const gpu of gpus) {
    known.set(gpu.slug, gpu);
    whole.append(option(gpu.slug, gpu.name));
    if (gpu.mig_profiles?.length) {
      const group = document.createElement("optgroup");
      group.label = `${shortName(gpu)}: MIG slices`;
      for (const profile of gpu.mig_profiles) {
        group.append(option(`${gpu.slug}${MIG_SEPARATOR}${profile.name}`, `${shortName(gpu)} · ${profile.name}`));
      }
      slices.push(group);
    }
  }
  return [whole, ...slices];
}
