import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "**/node_modules/", "coverage/", "jest.config.js"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      // The dynamic-provider shim must `require` at call time (docs/design/pulumi-machinery.md#captured-variables).
      "@typescript-eslint/no-require-imports": "off",
    },
  },
);
