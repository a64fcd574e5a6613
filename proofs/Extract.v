(* Extraction of the reference scorer of Reference.v to OCaml (issue 19).

   `bash proofs/check.sh` compiles this file in its temporary build folder, where the
   [Extraction] command below writes score_extracted.ml and .mli; it then compiles them with
   proofs/extracted/driver.ml (JSON in and out, stdlib only) into proofs/extracted/score.

   Only ExtrOcamlBasic is used: it maps bool, option, list, prod and unit to the OCaml types
   with the same constructors. Nothing else is realised by hand: nat stays unary, positive, Z
   and Q stay Coq's binary integers and exact fractions, computed by the extracted code, so
   every count and ratio printed is the one [score] computes. *)

From Coq Require Import List Arith ZArith QArith Extraction ExtrOcamlBasic.
From Prefixexec Require Import Cohort Prefix Reference.
Local Open Scope Z_scope.

(* Display only (the float next to each exact ratio, CONV-EXACT): the IEEE-754 double nearest
   to q as (m, e) with q ~ m * 2^e, |m| < 2^53, so that the driver's [ldexp (float m) e] is
   exact. Rounds half to even, like Python's float(Fraction). Not proven: floats carry no
   proven property; the tests compare these floats with Python's. *)
Definition scaled (a d sh : Z) : Z * Z * Z :=
  let num := if 0 <=? sh then a * 2 ^ sh else a in
  let den := if 0 <=? sh then d else d * 2 ^ (- sh) in
  (num / den, num mod den, den).

Definition float_parts (q : Q) : Z * Z :=
  let a := Z.abs (Qnum q) in
  let d := Zpos (Qden q) in
  if a =? 0 then (0, 0) else
  (* a / d lies in (2^(la - ld - 1), 2^(la - ld + 1)): scale it into [2^52, 2^53). *)
  let sh0 := 52 - (Z.log2 a - Z.log2 d) in
  let '(m0, _, _) := scaled a d sh0 in
  let sh := if m0 <? 2 ^ 52 then sh0 + 1 else sh0 in
  let '(m, r, den) := scaled a d sh in
  let up := (2 * r >? den) || ((2 * r =? den) && Z.odd m) in
  let m' := if up then m + 1 else m in
  let '(m'', e) := if m' =? 2 ^ 53 then (2 ^ 52, - sh + 1) else (m', - sh) in
  (Z.sgn (Qnum q) * m'', e).

Extraction Language OCaml.
Extraction "score_extracted"
  score rollout_of_actions rollout_of_outcome validb
  float_parts Z.div_eucl Z.of_nat Z.to_nat.
