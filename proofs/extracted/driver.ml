(* The driver of the extracted reference scorer (issue 19): reads JSONL records (REC-FORMAT)
   on standard input and prints the `prefixexec score --json --bootstrap 0` document, every
   number of which comes from the Coq definitions extracted by proofs/Extract.v
   (Score_extracted.score and the rollout constructors of proofs/Reference.v).

   This file is the untrusted part: a hand-written JSON parser (strict: no NaN or Infinity, no
   repeated key, UTF-8 only), the record checks of REC-FORMAT / REC-OUTCOME / REC-UNIQUE /
   REC-ERRORS, the grouping by condition, and the output (decimal strings of Coq's binary
   integers, the display floats, JSON laid out as Python's json.dumps(indent=2) does). Bad
   input prints `score: error: <stdin>:LINE: what` on stderr, nothing on stdout, and exits 2.
   OCaml standard library only. Usage: score < records.jsonl *)

module C = Score_extracted

exception Bad of string * string (* where, what *)

let bad where what = raise (Bad (where, what))

(* Coq's nat is unary: a horizon of h costs O(h) memory and the curves O(N h^2) steps. *)
let max_horizon = 10_000

(* ------------------------------------------------------------------------------------ *)
(* UTF-8                                                                                 *)

(* The length of the valid UTF-8 sequence at [i], or 0 when it is not one (strict: no
   overlong forms, no surrogates, nothing above U+10FFFF), as Python's decoder. *)
let utf8_length s i =
  let n = String.length s in
  let byte k = if i + k < n then Char.code s.[i + k] else -1 in
  let cont k = let b = byte k in b >= 0x80 && b <= 0xBF in
  let b0 = byte 0 in
  if b0 < 0x80 then 1
  else if b0 >= 0xC2 && b0 <= 0xDF then (if cont 1 then 2 else 0)
  else if b0 >= 0xE0 && b0 <= 0xEF then begin
    let b1 = byte 1 in
    let ok1 =
      if b0 = 0xE0 then b1 >= 0xA0 && b1 <= 0xBF
      else if b0 = 0xED then b1 >= 0x80 && b1 <= 0x9F
      else cont 1
    in
    if ok1 && cont 2 then 3 else 0
  end
  else if b0 >= 0xF0 && b0 <= 0xF4 then begin
    let b1 = byte 1 in
    let ok1 =
      if b0 = 0xF0 then b1 >= 0x90 && b1 <= 0xBF
      else if b0 = 0xF4 then b1 >= 0x80 && b1 <= 0x8F
      else cont 1
    in
    if ok1 && cont 2 && cont 3 then 4 else 0
  end
  else 0

(* The code point of the (valid) sequence of [len] bytes at [i]. *)
let code_point s i len =
  let b k = Char.code s.[i + k] in
  match len with
  | 1 -> b 0
  | 2 -> ((b 0 land 0x1F) lsl 6) lor (b 1 land 0x3F)
  | 3 -> ((b 0 land 0x0F) lsl 12) lor ((b 1 land 0x3F) lsl 6) lor (b 2 land 0x3F)
  | _ ->
      ((b 0 land 0x07) lsl 18) lor ((b 1 land 0x3F) lsl 12) lor ((b 2 land 0x3F) lsl 6)
      lor (b 3 land 0x3F)

(* Append code point [c] as UTF-8; a lone surrogate (from a \u escape) gets the same 3-byte
   form, so strings stay comparable in code point order. *)
let add_code_point buf c =
  let add x = Buffer.add_char buf (Char.chr x) in
  if c < 0x80 then add c
  else if c < 0x800 then (add (0xC0 lor (c lsr 6)); add (0x80 lor (c land 0x3F)))
  else if c < 0x10000 then begin
    add (0xE0 lor (c lsr 12));
    add (0x80 lor ((c lsr 6) land 0x3F));
    add (0x80 lor (c land 0x3F))
  end
  else begin
    add (0xF0 lor (c lsr 18));
    add (0x80 lor ((c lsr 12) land 0x3F));
    add (0x80 lor ((c lsr 6) land 0x3F));
    add (0x80 lor (c land 0x3F))
  end

(* Python's str.isspace, which decides whether a line is blank (skipped). *)
let is_python_space c =
  (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c = 0x85 || c = 0xA0 || c = 0x1680
  || (c >= 0x2000 && c <= 0x200A) || c = 0x2028 || c = 0x2029 || c = 0x202F || c = 0x205F
  || c = 0x3000

let is_blank line =
  let n = String.length line in
  let rec go i = i >= n || (let len = utf8_length line i in
                            is_python_space (code_point line i len) && go (i + len)) in
  go 0

(* ------------------------------------------------------------------------------------ *)
(* JSON                                                                                  *)

type json =
  | Null
  | Bool of bool
  | Int of string (* an integer literal: optional '-', digits *)
  | Float of string (* a number literal with a fraction or an exponent *)
  | Str of string (* UTF-8 *)
  | Arr of json list
  | Obj of (string * json) list (* keys in input order, none repeated *)

exception Syntax of string

let max_depth = 1000

(* Parse one JSON document (the whole of [s]) strictly, as Python's json.loads with NaN,
   Infinity and repeated keys rejected. *)
let parse_json (s : string) : json =
  let n = String.length s in
  let pos = ref 0 in
  let err what = raise (Syntax (Printf.sprintf "%s at column %d" what (!pos + 1))) in
  let peek () = if !pos < n then Some s.[!pos] else None in
  let rec skip_ws () =
    match peek () with
    | Some (' ' | '\t' | '\n' | '\r') -> incr pos; skip_ws ()
    | _ -> ()
  in
  let expect_word w v =
    let l = String.length w in
    if !pos + l <= n && String.sub s !pos l = w then (pos := !pos + l; v)
    else err "expecting a value"
  in
  let digits () =
    let start = !pos in
    while (match peek () with Some '0' .. '9' -> true | _ -> false) do incr pos done;
    !pos - start
  in
  let number () =
    let start = !pos in
    if peek () = Some '-' then incr pos;
    (match peek () with
     | Some '0' -> incr pos
     | Some '1' .. '9' -> ignore (digits ())
     | _ -> err "expecting a value");
    let integral = ref true in
    if peek () = Some '.' && !pos + 1 < n && s.[!pos + 1] >= '0' && s.[!pos + 1] <= '9' then begin
      incr pos; ignore (digits ()); integral := false
    end;
    (match peek () with
     | Some ('e' | 'E') ->
         let save = !pos in
         incr pos;
         (match peek () with Some ('+' | '-') -> incr pos | _ -> ());
         if digits () = 0 then pos := save else integral := false
     | _ -> ());
    let text = String.sub s start (!pos - start) in
    if !integral then Int text else Float text
  in
  let hex4 () =
    if !pos + 4 > n then err "invalid \\uXXXX escape";
    let v = ref 0 in
    for k = 0 to 3 do
      let c = s.[!pos + k] in
      let d =
        match c with
        | '0' .. '9' -> Char.code c - 48
        | 'a' .. 'f' -> Char.code c - 87
        | 'A' .. 'F' -> Char.code c - 55
        | _ -> err "invalid \\uXXXX escape"
      in
      v := (!v * 16) + d
    done;
    pos := !pos + 4;
    !v
  in
  let string_body () =
    (* after the opening quote *)
    let buf = Buffer.create 16 in
    let rec go () =
      if !pos >= n then err "unterminated string";
      let c = s.[!pos] in
      if c = '"' then (incr pos; Buffer.contents buf)
      else if c = '\\' then begin
        incr pos;
        if !pos >= n then err "unterminated string";
        let e = s.[!pos] in
        incr pos;
        (match e with
         | '"' -> Buffer.add_char buf '"'
         | '\\' -> Buffer.add_char buf '\\'
         | '/' -> Buffer.add_char buf '/'
         | 'b' -> Buffer.add_char buf '\b'
         | 'f' -> Buffer.add_char buf '\012'
         | 'n' -> Buffer.add_char buf '\n'
         | 'r' -> Buffer.add_char buf '\r'
         | 't' -> Buffer.add_char buf '\t'
         | 'u' ->
             let u = hex4 () in
             let cp =
               if u >= 0xD800 && u <= 0xDBFF && !pos + 6 <= n && s.[!pos] = '\\'
                  && s.[!pos + 1] = 'u'
               then begin
                 let save = !pos in
                 pos := !pos + 2;
                 let low = hex4 () in
                 if low >= 0xDC00 && low <= 0xDFFF then
                   0x10000 + ((u - 0xD800) lsl 10) + (low - 0xDC00)
                 else (pos := save; u)
               end
               else u
             in
             add_code_point buf cp
         | _ -> (pos := !pos - 1; err "invalid escape"));
        go ()
      end
      else if Char.code c < 0x20 then err "invalid control character in a string"
      else (Buffer.add_char buf c; incr pos; go ())
    in
    go ()
  in
  let rec value depth =
    if depth > max_depth then err "nested too deeply";
    skip_ws ();
    match peek () with
    | None -> err "expecting a value"
    | Some '{' ->
        incr pos;
        skip_ws ();
        if peek () = Some '}' then (incr pos; Obj [])
        else begin
          let rec members acc =
            skip_ws ();
            if peek () <> Some '"' then err "expecting a property name enclosed in double quotes";
            incr pos;
            let key = string_body () in
            if List.mem_assoc key acc then
              raise (Syntax (Printf.sprintf "key %S appears twice in one object" key));
            skip_ws ();
            if peek () <> Some ':' then err "expecting ':' delimiter";
            incr pos;
            let v = value (depth + 1) in
            skip_ws ();
            match peek () with
            | Some ',' -> incr pos; members ((key, v) :: acc)
            | Some '}' -> incr pos; Obj (List.rev ((key, v) :: acc))
            | _ -> err "expecting ',' delimiter"
          in
          members []
        end
    | Some '[' ->
        incr pos;
        skip_ws ();
        if peek () = Some ']' then (incr pos; Arr [])
        else begin
          let rec items acc =
            let v = value (depth + 1) in
            skip_ws ();
            match peek () with
            | Some ',' -> incr pos; items (v :: acc)
            | Some ']' -> incr pos; Arr (List.rev (v :: acc))
            | _ -> err "expecting ',' delimiter"
          in
          items []
        end
    | Some '"' -> incr pos; Str (string_body ())
    | Some 't' -> expect_word "true" (Bool true)
    | Some 'f' -> expect_word "false" (Bool false)
    | Some 'n' -> expect_word "null" Null
    | Some ('-' | '0' .. '9') -> number ()
    | Some _ -> err "expecting a value"
  in
  let v = value 0 in
  skip_ws ();
  if !pos < n then err "extra data";
  v

let type_name = function
  | Null -> "null"
  | Bool _ -> "boolean"
  | Int _ | Float _ -> "number"
  | Str _ -> "string"
  | Arr _ -> "array"
  | Obj _ -> "object"

(* The text Python's json.dumps would give a string, for messages. *)
let quote s = Printf.sprintf "%S" s

(* ------------------------------------------------------------------------------------ *)
(* Coq values                                                                            *)

let nat_of_int (k : int) : C.nat =
  let rec go i acc = if i = 0 then acc else go (i - 1) (C.S acc) in
  go k C.O

let int_of_nat (k : C.nat) : int =
  let rec go acc = function C.O -> acc | C.S m -> go (acc + 1) m in
  go 0 k

(* A positive known to be below 2^62. *)
let rec int_of_positive = function
  | C.XH -> 1
  | C.XO p -> 2 * int_of_positive p
  | C.XI p -> (2 * int_of_positive p) + 1

let int_of_z = function
  | C.Z0 -> 0
  | C.Zpos p -> int_of_positive p
  | C.Zneg p -> - int_of_positive p

let ten = C.Zpos (C.XO (C.XI (C.XO C.XH)))

(* The decimal text of a Coq integer of any size (exact: Coq's own division). *)
let decimal_of_z (z : C.z) : string =
  let rec digits z acc =
    match z with
    | C.Z0 -> acc
    | _ ->
        let q, r = C.Z.div_eucl z ten in
        digits q (Char.chr (48 + int_of_z r) :: acc)
  in
  match z with
  | C.Z0 -> "0"
  | C.Zpos _ -> String.of_seq (List.to_seq (digits z []))
  | C.Zneg p -> "-" ^ String.of_seq (List.to_seq (digits (C.Zpos p) []))

(* "p/q", or "p" when q = 1, of a reduced rational (CONV-EXACT). *)
let exact_of_q (q : C.q) : string =
  match q.C.qden with
  | C.XH -> decimal_of_z q.C.qnum
  | d -> decimal_of_z q.C.qnum ^ "/" ^ decimal_of_z (C.Zpos d)

let float_of_q (q : C.q) : float =
  let m, e = C.float_parts q in
  ldexp (float_of_int (int_of_z m)) (int_of_z e)

(* Python's repr of a finite float: the shortest digits that read back as the same double,
   positional for exponents -4 .. 15, else d.ddde+XX. *)
let py_repr (x : float) : string =
  if x = 0.0 then (if 1.0 /. x < 0.0 then "-0.0" else "0.0")
  else begin
    let rec shortest p =
      let s = Printf.sprintf "%.*e" p x in
      if p >= 16 || float_of_string s = x then s else shortest (p + 1)
    in
    let s = shortest 0 in
    let neg = s.[0] = '-' in
    let s = if neg then String.sub s 1 (String.length s - 1) else s in
    let epos = String.index s 'e' in
    let mant = String.sub s 0 epos in
    let exp = int_of_string (String.sub s (epos + 1) (String.length s - epos - 1)) in
    let digits = String.concat "" (String.split_on_char '.' mant) in
    (* strip trailing zeros, keep one digit *)
    let len = ref (String.length digits) in
    while !len > 1 && digits.[!len - 1] = '0' do decr len done;
    let digits = String.sub digits 0 !len in
    let nd = String.length digits in
    let body =
      if exp >= -4 && exp < 16 then begin
        if exp >= 0 then begin
          let int_part =
            if nd > exp + 1 then String.sub digits 0 (exp + 1)
            else digits ^ String.make (exp + 1 - nd) '0'
          in
          let frac = if nd > exp + 1 then String.sub digits (exp + 1) (nd - exp - 1) else "0" in
          int_part ^ "." ^ frac
        end
        else "0." ^ String.make (-exp - 1) '0' ^ digits
      end
      else begin
        let m = if nd = 1 then digits else String.sub digits 0 1 ^ "." ^ String.sub digits 1 (nd - 1) in
        Printf.sprintf "%se%c%02d" m (if exp < 0 then '-' else '+') (abs exp)
      end
    in
    if neg then "-" ^ body else body
  end

(* ------------------------------------------------------------------------------------ *)
(* Records (REC-FORMAT, REC-OUTCOME)                                                      *)

let label_names =
  [ ("schema", C.Schema); ("dependency", C.Dependency); ("precondition", C.Precondition);
    ("state_consistency", C.StateConsistency); ("information", C.Information) ]

let label_list = "schema, dependency, precondition, state_consistency, information"

let parse_label where path = function
  | Str s -> (
      match List.assoc_opt s label_names with
      | Some l -> l
      | None -> bad where (Printf.sprintf "at %s: %s is not a label (%s)" path (quote s) label_list))
  | v -> bad where (Printf.sprintf "at %s: expected a label string, got %s" path (type_name v))

(* A label, a non-empty list of labels, or null (no label: REC-FORMAT). *)
let parse_labels where path = function
  | Null -> []
  | Str _ as v -> [ parse_label where path v ]
  | Arr [] -> bad where (Printf.sprintf "at %s: an empty list of labels" path)
  | Arr items -> List.mapi (fun i v -> parse_label where (Printf.sprintf "%s[%d]" path i) v) items
  | v -> bad where (Printf.sprintf "at %s: expected a label or a list of labels, got %s" path (type_name v))

let check_keys where path allowed fields =
  List.iter
    (fun (k, _) ->
      if not (List.mem k allowed) then
        bad where
          (Printf.sprintf "at %s: unknown key %s (allowed: %s)" path (quote k) (String.concat ", " allowed)))
    fields

let field fields k = List.assoc_opt k fields

let required where path fields k =
  match field fields k with
  | Some v -> v
  | None -> bad where (Printf.sprintf "at %s: missing required key %s" path (quote k))

let join path k = if path = "record" then k else path ^ "." ^ k

let nonempty_string where path = function
  | Str "" -> bad where (Printf.sprintf "at %s: must be a non-empty string" path)
  | Str s -> s
  | v -> bad where (Printf.sprintf "at %s: expected a string, got %s" path (type_name v))

let any_string where path = function
  | Str s -> s
  | v -> bad where (Printf.sprintf "at %s: expected a string, got %s" path (type_name v))

let boolean where path = function
  | Bool b -> b
  | v -> bad where (Printf.sprintf "at %s: expected true or false, got %s" path (type_name v))

let obj where path = function
  | Obj fields -> fields
  | v -> bad where (Printf.sprintf "at %s: expected an object, got %s" path (type_name v))

(* The canonical text of an integer literal (Python's str(int): "-0" is "0"). *)
let canonical_int text = if text = "-0" then "0" else text

let is_negative text = String.length text > 0 && text.[0] = '-' && canonical_int text <> "0"

(* A number literal >= 0 ("-0.0" and "-0e5" are 0). *)
let nonnegative_number where path = function
  | Int t | Float t ->
      let has_nonzero_digit =
        let rec go i =
          i < String.length t && (match t.[i] with 'e' | 'E' -> false | '1' .. '9' -> true | _ -> go (i + 1))
        in
        go 0
      in
      if t.[0] = '-' && has_nonzero_digit then
        bad where (Printf.sprintf "at %s: must be >= 0, got %s" path t)
  | v -> bad where (Printf.sprintf "at %s: expected a number, got %s" path (type_name v))

(* An integer in [least, most], as an OCaml int; above [most] is this scorer's limit. *)
let bounded_int where path least most = function
  | Int t ->
      let t = canonical_int t in
      if is_negative t then bad where (Printf.sprintf "at %s: must be >= %d, got %s" path least t);
      let too_large () =
        bad where
          (Printf.sprintf "at %s: %s exceeds this reference scorer's limit of %d (Coq's nat is unary)"
             path t most)
      in
      if String.length t > 9 then too_large ();
      let k = int_of_string t in
      if k < least then bad where (Printf.sprintf "at %s: must be >= %d, got %s" path least t);
      if k > most then too_large ();
      k
  | Float t -> bad where (Printf.sprintf "at %s: expected an integer, got %s" path t)
  | v -> bad where (Printf.sprintf "at %s: expected an integer, got %s" path (type_name v))

type record = {
  condition : string * string * string;
  task : string;
  trial : string;
  rollout : C.rollout;
}

let record_keys =
  [ "dataset"; "task_id"; "model"; "method"; "trial"; "success"; "actions"; "outcome"; "no_tool_allowed";
    "cost"; "meta" ]

let parse_action where i v =
  let path = Printf.sprintf "actions[%d]" i in
  let fields = obj where path v in
  check_keys where path [ "tool"; "arguments"; "id"; "executable"; "label"; "reason" ] fields;
  ignore (nonempty_string where (path ^ ".tool") (required where path fields "tool"));
  (match field fields "arguments" with Some a -> ignore (obj where (path ^ ".arguments") a) | None -> ());
  (match field fields "id" with Some a -> ignore (any_string where (path ^ ".id") a) | None -> ());
  (match field fields "reason" with Some a -> ignore (any_string where (path ^ ".reason") a) | None -> ());
  let executable = boolean where (path ^ ".executable") (required where path fields "executable") in
  let labels =
    match field fields "label" with Some l -> parse_labels where (path ^ ".label") l | None -> []
  in
  if executable && (labels <> [] || field fields "reason" <> None) then
    bad where (Printf.sprintf "%s: label/reason given for an executable action" path);
  (executable, labels)

let parse_record where (doc : json) : record =
  let fields =
    match doc with
    | Obj f -> f
    | v -> bad where (Printf.sprintf "expected a JSON object, got %s" (type_name v))
  in
  let has k = field fields k <> None in
  if has "actions" && has "outcome" then bad where "give either 'actions' or 'outcome', not both";
  if not (has "actions" || has "outcome") then
    bad where "missing field: one of 'actions' or 'outcome' is required";
  check_keys where "record" record_keys fields;
  let str k = nonempty_string where k (required where "record" fields k) in
  let dataset = str "dataset" and model = str "model" and meth = str "method" in
  let task =
    match required where "record" fields "task_id" with
    | Str "" -> bad where "at task_id: must be a non-empty string or an integer"
    | Str s -> s
    | Int t -> canonical_int t
    | v -> bad where (Printf.sprintf "at task_id: expected a string or an integer, got %s" (type_name v))
  in
  let trial =
    match field fields "trial" with
    | None -> "0"
    | Some (Int t) ->
        let t = canonical_int t in
        if is_negative t then bad where (Printf.sprintf "at trial: must be >= 0, got %s" t);
        t
    | Some v ->
        bad where
          (Printf.sprintf "at trial: expected an integer, got %s"
             (match v with Float t -> t | _ -> type_name v))
  in
  let success = boolean where "success" (required where "record" fields "success") in
  let no_tool_allowed =
    match field fields "no_tool_allowed" with Some v -> boolean where "no_tool_allowed" v | None -> false
  in
  (match field fields "cost" with
   | Some c ->
       let cf = obj where "cost" c in
       check_keys where "cost" [ "tokens"; "latency_s" ] cf;
       List.iter (fun (k, v) -> nonnegative_number where ("cost." ^ k) v) cf
   | None -> ());
  (match field fields "meta" with Some m -> ignore (obj where "meta" m) | None -> ());
  let rollout =
    match field fields "outcome" with
    | Some o ->
        let of_ = obj where "outcome" o in
        check_keys where "outcome" [ "T"; "fed"; "label"; "reason" ] of_;
        let t = bounded_int where "outcome.T" 1 max_horizon (required where "outcome" of_ "T") in
        let fed =
          bounded_int where "outcome.fed" 1 (max_horizon + 1) (required where "outcome" of_ "fed")
        in
        let labels =
          match field of_ "label" with Some l -> parse_labels where "outcome.label" l | None -> []
        in
        (match field of_ "reason" with Some r -> ignore (any_string where "outcome.reason" r) | None -> ());
        let r = C.rollout_of_outcome (nat_of_int t) (nat_of_int fed) labels success in
        (* INV-FED-RANGE, by the Coq test validb (Reference.validb_spec). *)
        if not (C.validb r) then
          bad where (Printf.sprintf "outcome.fed must be in [1, T+1] = [1, %d]: %d" (t + 1) fed);
        if fed = t + 1 && (labels <> [] || field of_ "reason" <> None) then
          bad where "outcome.label/reason given for a fully executable rollout (fed = T+1)";
        r
    | None ->
        let acts =
          match required where "record" fields "actions" with
          | Arr items ->
              if List.length items > max_horizon then
                bad where
                  (Printf.sprintf "at actions: %d actions exceed this reference scorer's limit of %d"
                     (List.length items) max_horizon);
              List.mapi (parse_action where) items
          | v -> bad where (Printf.sprintf "at actions: expected an array, got %s" (type_name v))
        in
        C.rollout_of_actions acts no_tool_allowed success
  in
  { condition = (dataset, model, meth); task; trial; rollout }

(* ------------------------------------------------------------------------------------ *)
(* Output: Python's json.dumps(..., indent=2, ensure_ascii=False)                        *)

type out =
  | ONull
  | ONat of C.nat
  | OFloat of float
  | OStr of string
  | OArr of out list
  | OObj of (string * out) list

let add_json_string buf s =
  Buffer.add_char buf '"';
  let n = String.length s in
  let i = ref 0 in
  while !i < n do
    let c = s.[!i] in
    (match c with
     | '"' -> Buffer.add_string buf "\\\""
     | '\\' -> Buffer.add_string buf "\\\\"
     | '\n' -> Buffer.add_string buf "\\n"
     | '\r' -> Buffer.add_string buf "\\r"
     | '\t' -> Buffer.add_string buf "\\t"
     | '\b' -> Buffer.add_string buf "\\b"
     | '\012' -> Buffer.add_string buf "\\f"
     | c when Char.code c < 0x20 -> Buffer.add_string buf (Printf.sprintf "\\u%04x" (Char.code c))
     | '\xED' when !i + 2 < n && Char.code s.[!i + 1] >= 0xA0 ->
         (* a lone surrogate (only from a \u escape): written back as an escape *)
         Buffer.add_string buf (Printf.sprintf "\\u%04x" (code_point s !i 3));
         i := !i + 2
     | c -> Buffer.add_char buf c);
    incr i
  done;
  Buffer.add_char buf '"'

let rec add_out buf indent v =
  let pad k = Buffer.add_string buf (String.make k ' ') in
  match v with
  | ONull -> Buffer.add_string buf "null"
  | ONat k -> Buffer.add_string buf (string_of_int (int_of_nat k))
  | OFloat x -> Buffer.add_string buf (py_repr x)
  | OStr s -> add_json_string buf s
  | OArr [] -> Buffer.add_string buf "[]"
  | OObj [] -> Buffer.add_string buf "{}"
  | OArr items ->
      Buffer.add_string buf "[\n";
      List.iteri
        (fun i item ->
          if i > 0 then Buffer.add_string buf ",\n";
          pad (indent + 2);
          add_out buf (indent + 2) item)
        items;
      Buffer.add_char buf '\n';
      pad indent;
      Buffer.add_char buf ']'
  | OObj members ->
      Buffer.add_string buf "{\n";
      List.iteri
        (fun i (k, item) ->
          if i > 0 then Buffer.add_string buf ",\n";
          pad (indent + 2);
          add_json_string buf k;
          Buffer.add_string buf ": ";
          add_out buf (indent + 2) item)
        members;
      Buffer.add_char buf '\n';
      pad indent;
      Buffer.add_char buf '}'

let float_or_null = function Some q -> OFloat (float_of_q q) | None -> ONull
let exact_or_null = function Some q -> OStr (exact_of_q q) | None -> ONull

(* One condition object of OUT-JSON, every number from the extracted [score]. *)
let condition_object (dataset, model, meth) (cohort : C.cohort) : out =
  let r = C.score cohort in
  let label_counts =
    List.map2 (fun name k -> (name, ONat k))
      (List.map fst label_names @ [ "unlabelled" ])
      r.C.rep_labels
  in
  OObj
    [ ("dataset", OStr dataset);
      ("model", OStr model);
      ("method", OStr meth);
      ("N", ONat r.C.rep_N);
      ("TER", OFloat (float_of_q r.C.rep_TER));
      ("AUC_PEC", OFloat (float_of_q r.C.rep_AUC_PEC));
      ("mean_FED", OFloat (float_of_q r.C.rep_mean_FED));
      ("success", OFloat (float_of_q r.C.rep_success));
      ("RR", float_or_null r.C.rep_RR);
      ("RR_eligible", ONat r.C.rep_RR_eligible);
      ("recovered", ONat r.C.rep_recovered);
      ("fully_executable", ONat r.C.rep_fully_executable);
      ("PEC", OArr (List.map (fun q -> OFloat (float_of_q q)) r.C.rep_PEC));
      ("PEC_elig", OArr (List.map float_or_null r.C.rep_PEC_elig));
      ("n_k", OArr (List.map (fun k -> ONat k) r.C.rep_n_k));
      ("labels", OObj label_counts);
      ( "decomposition",
        OObj
          [ ("q", OFloat (float_of_q r.C.rep_q));
            ("s", float_or_null r.C.rep_s);
            ("r", float_or_null r.C.rep_r);
            ("uninterrupted", ONat r.C.rep_uninterrupted);
            ("recovered", ONat r.C.rep_recovered) ] );
      ( "exact",
        OObj
          [ ("TER", OStr (exact_of_q r.C.rep_TER));
            ("AUC_PEC", OStr (exact_of_q r.C.rep_AUC_PEC));
            ("mean_FED", OStr (exact_of_q r.C.rep_mean_FED));
            ("success", OStr (exact_of_q r.C.rep_success));
            ("RR", exact_or_null r.C.rep_RR);
            ("PEC", OArr (List.map (fun q -> OStr (exact_of_q q)) r.C.rep_PEC));
            ("PEC_elig", OArr (List.map exact_or_null r.C.rep_PEC_elig));
            ( "decomposition",
              OObj
                [ ("q", OStr (exact_of_q r.C.rep_q));
                  ("s", exact_or_null r.C.rep_s);
                  ("r", exact_or_null r.C.rep_r) ] ) ] ) ]

let signature = "prefixexec-reference:coq-extraction|spec:1|adapter:records|boot:0"

(* ------------------------------------------------------------------------------------ *)
(* Main                                                                                  *)

let read_all ic =
  let buf = Buffer.create 65536 in
  let chunk = Bytes.create 65536 in
  let rec go () =
    let k = input ic chunk 0 (Bytes.length chunk) in
    if k > 0 then (Buffer.add_subbytes buf chunk 0 k; go ())
  in
  go ();
  Buffer.contents buf

(* Lines as Python's text mode gives them: "\n", "\r\n" and "\r" end a line. *)
let split_lines s =
  let n = String.length s in
  let lines = ref [] in
  let start = ref 0 in
  let i = ref 0 in
  while !i < n do
    (match s.[!i] with
     | '\n' -> lines := String.sub s !start (!i - !start) :: !lines; start := !i + 1
     | '\r' ->
         lines := String.sub s !start (!i - !start) :: !lines;
         if !i + 1 < n && s.[!i + 1] = '\n' then incr i;
         start := !i + 1
     | _ -> ());
    incr i
  done;
  if !start < n then lines := String.sub s !start (n - !start) :: !lines;
  List.rev !lines

let check_utf8 input =
  let n = String.length input in
  let line = ref 1 in
  let i = ref 0 in
  while !i < n do
    let len = utf8_length input !i in
    if len = 0 then
      bad (Printf.sprintf "<stdin>:%d" !line)
        (Printf.sprintf "not UTF-8 text (invalid byte 0x%02x at byte %d)" (Char.code input.[!i]) !i);
    if input.[!i] = '\n' then incr line;
    i := !i + len
  done

let run () =
  let input = read_all stdin in
  check_utf8 input;
  let seen = Hashtbl.create 1024 in
  let groups = Hashtbl.create 16 in
  List.iteri
    (fun index line ->
      let where = Printf.sprintf "<stdin>:%d" (index + 1) in
      if not (is_blank line) then begin
        let doc =
          try parse_json line with Syntax what -> bad where ("not valid JSON: " ^ what)
        in
        let r = parse_record where doc in
        let dataset, model, meth = r.condition in
        let key = (dataset, model, meth, r.task, r.trial) in
        (match Hashtbl.find_opt seen key with
         | Some first ->
             bad where
               (Printf.sprintf
                  "repeats the key (dataset, model, method, task_id, trial) = (%s, %s, %s, %s, %s) first seen at %s"
                  (quote dataset) (quote model) (quote meth) (quote r.task) r.trial first)
         | None -> Hashtbl.add seen key where);
        let previous = try Hashtbl.find groups r.condition with Not_found -> [] in
        Hashtbl.replace groups r.condition (r.rollout :: previous)
      end)
    (split_lines input);
  if Hashtbl.length groups = 0 then bad "<stdin>" "no records found";
  (* Conditions sorted by (dataset, model, method): byte order of UTF-8 is code point order.
     The rollouts of a condition stay in input order; every metric is invariant under
     permutation (Invariance.metrics_perm_invariant), so no sort by (task_id, trial) is needed. *)
  let conditions =
    List.sort compare (Hashtbl.fold (fun k v acc -> (k, List.rev v) :: acc) groups [])
  in
  let doc =
    OObj
      [ ("signature", OStr signature);
        ("conditions", OArr (List.map (fun (k, cohort) -> condition_object k cohort) conditions)) ]
  in
  let buf = Buffer.create 65536 in
  add_out buf 0 doc;
  Buffer.add_char buf '\n';
  print_string (Buffer.contents buf)

let () =
  set_binary_mode_in stdin true;
  set_binary_mode_out stdout true;
  match Array.to_list Sys.argv with
  | [ _ ] | [ _; "-" ] -> (
      try run () with
      | Bad (where, what) ->
          prerr_endline (Printf.sprintf "score: error: %s: %s" where what);
          exit 2
      | Stack_overflow | Out_of_memory ->
          prerr_endline "score: error: <stdin>: input too large for this reference scorer";
          exit 2)
  | _ ->
      prerr_endline "usage: score < records.jsonl   (JSONL records on standard input)";
      exit 2
