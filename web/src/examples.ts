// The examples gallery: the default example (always there, so the page has content before anything is fetched)
// and the gallery built from testdata/examples into an asset by tools/webbuild.

export interface Example {
  id: string;
  title: string;
  category?: string;
  description?: string;
  /** Where the example comes from (https): its description's "(see SOURCE)" links there. */
  source?: string;
  crd: string;
  objects?: string;
  old?: string;
  /** The upgrade mode's old CRD (crd is then the new one). */
  oldCrd?: string;
  mode?: string;
  tab?: string;
}

export const DEFAULT_EXAMPLE: Example = {
  id: 'default',
  title: 'CronTab with a default and a CEL rule',
  category: 'Basics',
  crd: `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names:
    plural: crontabs
    singular: crontab
    kind: CronTab
    shortNames:
    - ct
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - rule: "self.replicas <= 10"
              message: "at most 10 replicas"
            properties:
              cronSpec:
                type: string
                description: The schedule, in cron format.
                pattern: '^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$'
              image:
                type: string
                description: The container image to run.
              replicas:
                type: integer
                default: 1
                minimum: 1
              policy:
                type: string
                enum: [Allow, Forbid, Replace]
    additionalPrinterColumns:
    - name: Spec
      type: string
      jsonPath: .spec.cronSpec
    - name: Replicas
      type: integer
      jsonPath: .spec.replicas
    - name: Image
      type: string
      jsonPath: .spec.image
      priority: 1
    - name: Age
      type: date
      jsonPath: .metadata.creationTimestamp
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
`,
  objects: `apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: my-new-cron-object
spec:
  cronSpec: "* * * * */5"
  image: my-awesome-cron-image
  unknownField: pruned by the server
`,
  old: '',
  mode: 'create',
};

/** Loads the gallery; an unreachable or broken file gives the default example alone. It is fetched at a low
 * priority: it loads beside the engine's wasm, which the page needs more. */
export async function loadExamples(url: string): Promise<Example[]> {
  try {
    const resp = await fetch(url, { priority: 'low' });
    if (!resp.ok) return [DEFAULT_EXAMPLE];
    const data = await resp.json();
    const list: Example[] = Array.isArray(data?.examples) ? data.examples : [];
    return [DEFAULT_EXAMPLE, ...list.filter((e) => e && typeof e.crd === 'string' && typeof e.id === 'string')];
  } catch {
    return [DEFAULT_EXAMPLE];
  }
}
