/** The values of a `use…()` helper's hooks, as they set them: each unset until its hook has run. */
export type HookValues<T> = { -readonly [K in keyof T]?: T[K] };

/**
 * What a `use…()` helper hands its describe block: `names` of `values`, read as the hooks last set them.
 * Read before its hook ran (outside a test or hook), a value throws, naming `helper` and the value,
 * instead of handing out `undefined`.
 */
export function setByHooks<T extends object>(
  helper: string,
  values: HookValues<T>,
  names: ReadonlyArray<keyof T & string>,
): T {
  const view = {} as T;
  for (const name of names)
    Object.defineProperty(view, name, {
      enumerable: true,
      get() {
        const value = values[name];
        if (value === undefined)
          throw new Error(`${helper}.${name} is set by its hooks: read it inside a test or hook`);
        return value;
      },
    });
  return view;
}
