"""Which files are prose and which are code, by extension: chunking cuts them differently,
the text index keeps a code chunk's symbol name in its own field, and recall weighs the
dense leg of each with its own weight. A leaf module (no imports)."""

MARKDOWN_EXT = {".md", ".markdown", ".mdx", ".rst", ".txt", ".adoc"}
CODE_EXT = {
    ".py", ".pyi", ".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".go", ".rs", ".java",
    ".kt", ".scala", ".c", ".h", ".cc", ".cpp", ".hpp", ".cs", ".rb", ".php", ".swift",
    ".lua", ".sh", ".bash", ".zsh", ".ex", ".exs", ".clj", ".hs", ".ml", ".sql",
}


def is_code_path(path: str) -> bool:
    dot = path.rfind(".")
    return dot >= 0 and path[dot:].lower() in CODE_EXT
