// Validate KEDA objects against KEDA's own schemas (@kubernetes-models/keda, generated from
// KEDA's CRDs): reads a JSON array of objects on stdin, prints one line per object
// ("ok <kind>/<name>" or "invalid <kind>/<name>: <why>"), exits 1 if any is invalid.
// Used by tests/k8s/test_k8s.py: `node tools/validate-keda.mjs < objects.json`.
import { readFileSync } from "node:fs";
import * as keda from "@kubernetes-models/keda/keda.sh/v1alpha1";

const objects = JSON.parse(readFileSync(0, "utf8"));
let invalid = 0;
for (const object of objects) {
  const name = `${object.kind}/${object.metadata?.name ?? "?"}`;
  const Model = keda[object.kind];
  if (object.apiVersion !== "keda.sh/v1alpha1" || typeof Model !== "function") {
    console.log(`invalid ${name}: not a keda.sh/v1alpha1 kind`);
    invalid += 1;
    continue;
  }
  try {
    new Model(object).validate();
    console.log(`ok ${name}`);
  } catch (error) {
    console.log(`invalid ${name}: ${error.message.replace(/\s+/g, " ")}`);
    invalid += 1;
  }
}
process.exit(invalid ? 1 : 0);
